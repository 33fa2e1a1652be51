using System.Security.Cryptography.X509Certificates;

namespace CoapNet.Dtls.Credentials;

/// <summary>Loads a DER certificate the way each target framework prefers.</summary>
internal static class X509
{
    public static X509Certificate2 Load(byte[] der)
#if NET9_0_OR_GREATER
        => X509CertificateLoader.LoadCertificate(der);
#else
        => new(der);
#endif
}
