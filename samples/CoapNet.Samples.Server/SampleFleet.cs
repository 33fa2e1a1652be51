using System.Net;
using System.Runtime.CompilerServices;
using CoapNet.Dtls;
using CoapNet.Server;

namespace CoapNet.Samples.Server;

/// <summary>
/// The sample's fleet (--psk-file, issue 41): the devices' pre-shared keys from the library's key file
/// (<see cref="DtlsPskFile"/>, re-read when it changes), the coaps endpoint that takes them, and /fleet/{identity}.
/// </summary>
/// <remarks>
/// A type of its own, as <see cref="SampleCertificate"/> is, so that the program's main method names no DTLS type and a
/// server started without coaps loads no DTLS assembly (issue 25).
/// </remarks>
internal sealed class SampleFleet
{
    private readonly DtlsPskFile _keys;

    private SampleFleet(DtlsPskFile keys) => _keys = keys;

    /// <summary>Reads the key file at <paramref name="path"/>.</summary>
    /// <exception cref="FormatException">A line is malformed; the message names the file and the line.</exception>
    /// <exception cref="IOException">The file cannot be read.</exception>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static SampleFleet Load(string path) => new(new DtlsPskFile(path));

    /// <summary>
    /// The coaps endpoint at <paramref name="local"/>, with a key per device: one session per device, so a fleet that
    /// comes back from new addresses at once (a reconnect storm) does not fill the server with the sessions it left.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public void Listen(CoapServerOptions options, IPEndPoint local) => SampleCertificate.ListenDtls(options, local, _keys, oneSessionPerIdentity: true);

    /// <summary>Maps /fleet/{identity} for the devices of the file.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public void Map(CoapServer server) => FleetResource.Map(server, _keys);

    /// <summary>The console line that says where the keys come from.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public string Describe()
        => $"coaps pre-shared keys: {_keys.Count} identities from {_keys.Path} (re-read when it changes), each reporting to /fleet/{{identity}}";
}
