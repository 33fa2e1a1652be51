using System.Text;
using CoapNet.Dtls;

namespace CoapNet.Scenarios;

/// <summary>
/// What the fleet scenarios (fleet-observers, fleet-moves) are pointed at: the sample server's coaps URI (--server) and the
/// fleet's key file (--keys, written by coap-fleet --write-keys), whose identities they speak as.
/// </summary>
internal sealed class FleetTarget
{
    private Uri? _server;
    private string? _keysPath;
    private DtlsPskTable? _keys;

    /// <summary>The server's coaps URI.</summary>
    public Uri Server => _server!;

    /// <summary>Takes --server and --keys; false for any other option, for the scenario's own.</summary>
    public bool TryApply(string name, string? value)
    {
        switch (name)
        {
            case "--server":
                _server = new Uri(value!);
                return true;
            case "--keys":
                _keysPath = value;
                return true;
            default:
                return false;
        }
    }

    /// <summary>Reads the key file, once both options were given; an <see cref="ArgumentException"/> ending with <paramref name="usage"/> otherwise.</summary>
    public void Load(string usage)
    {
        if (_server is null || _keysPath is null)
        {
            throw new ArgumentException($"--server and --keys are needed.\n{usage}");
        }

        _keys = DtlsPskFile.Read(_keysPath);
    }

    /// <summary>The key of <paramref name="identity"/>; an <see cref="ArgumentException"/> naming <paramref name="writeKeys"/> (the coap-fleet command that writes it) when the file lacks it.</summary>
    public byte[] KeyOf(string identity, string writeKeys)
        => _keys!.TryGetKey(Encoding.UTF8.GetBytes(identity), out ReadOnlyMemory<byte> key)
            ? key.ToArray()
            : throw new ArgumentException($"{_keysPath} has no {identity}: write it with {writeKeys}.");
}
