using System.CommandLine;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using CoapNet.Tls;

namespace CoapNet.Cli;

/// <summary>
/// --cert FILE, --key FILE and --ca FILE: the certificates of coaps+tcp:// requests (CoAP over TLS, RFC 8323 section 9.1)
/// and of coaps+ws:// ones (CoAP over a WebSocket in TLS, section 4), which take them from the same client options.
/// Without --ca the server's certificate must chain to the system's trust store; with it, to the certificates in the
/// file only, which may be a self-signed server certificate itself. Either way it must name the URI's host. .NET's TLS
/// has no pre-shared keys, so there is no -k/-u here.
/// </summary>
internal sealed class TlsCredentials
{
    /// <summary>--cert: the client's certificate, for servers that ask for one.</summary>
    public Option<FileInfo?> Certificate { get; } = new("--cert")
    {
        Description = "coaps+tcp and coaps+ws: the client's certificate (PEM), sent when the server asks for one; needs --key.",
        HelpName = "FILE",
    };

    /// <summary>--key: the private key of --cert.</summary>
    public Option<FileInfo?> Key { get; } = new("--key")
    {
        Description = "coaps+tcp and coaps+ws: the private key (PEM) of --cert.",
        HelpName = "FILE",
    };

    /// <summary>--ca: the certificates the server's must chain to.</summary>
    public Option<FileInfo?> Authorities { get; } = new("--ca")
    {
        Description = "coaps+tcp and coaps+ws: trust only the certificates (PEM) in this file for the server's certificate, instead of the system's: CA certificates, or a self-signed server certificate itself.",
        HelpName = "FILE",
    };

    /// <summary>Adds the options to <paramref name="command"/>, with the rule that --cert and --key go together.</summary>
    /// <param name="command">The command.</param>
    public void AddTo(Command command)
    {
        command.Add(Certificate);
        command.Add(Key);
        command.Add(Authorities);
        command.Validators.Add(result =>
        {
            if ((result.GetResult(Certificate) is null) != (result.GetResult(Key) is null))
            {
                result.AddError("--cert and --key go together: the client's certificate and its private key.");
            }
        });
    }

    /// <summary>The TLS options the parsed files give; the defaults when none was given.</summary>
    /// <param name="parse">The parse result.</param>
    /// <returns>The options.</returns>
    /// <exception cref="ArgumentException">A file cannot be read as PEM; the message names the option and the file.</exception>
    public TlsClientOptions Read(ParseResult parse)
    {
        TlsClientOptions options = new();
        if (parse.GetValue(Certificate) is { } certificate && parse.GetValue(Key) is { } key)
        {
            options.Certificate = Load("--cert/--key", certificate, () => X509Certificate2.CreateFromPemFile(certificate.FullName, key.FullName));
        }

        if (parse.GetValue(Authorities) is { } authorities)
        {
            X509Certificate2Collection roots = Load("--ca", authorities, () =>
            {
                X509Certificate2Collection read = [];
                read.ImportFromPemFile(authorities.FullName);
                return read;
            });
            options.TrustedRoots = roots.Count > 0 ? roots : throw new ArgumentException($"--ca: '{authorities.FullName}' holds no PEM certificate.");
        }

        return options;
    }

    private static T Load<T>(string option, FileInfo file, Func<T> load)
    {
        try
        {
            return load();
        }
        catch (CryptographicException e)
        {
            throw new ArgumentException($"{option}: '{file.FullName}' cannot be read as PEM: {e.Message}", e);
        }
    }
}
