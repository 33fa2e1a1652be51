using System.Collections.Concurrent;
using System.Text;
using CoapNet.Channels;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Samples.Server;

/// <summary>
/// /fleet/{identity} (issue 41): the last reading of each device of a fleet. POST stores a reading (2.04 Changed), and
/// only the device whose DTLS pre-shared key identity is {identity} may POST there (4.03 Forbidden otherwise, and on an
/// unsecured transport); GET returns the last reading (2.05, empty until the first) to anyone, and is observable
/// (RFC 7641), so each accepted POST notifies that device's observers, and only theirs.
/// </summary>
/// <remarks>
/// The devices are those of the server's key store (<see cref="DtlsPskStore"/>): an identity it does not know gets 4.04,
/// so no request can make the table hold more than the fleet. A device's entry is made at its first request (a device
/// provisioned while the server runs is served at once) and costs a small object and its last reading (about 200 bytes
/// with a SenML reading), since 100,000 of them share one server.
/// </remarks>
public static class FleetResource
{
    /// <summary>The longest reading kept, in bytes; a longer one gets 4.13 (a SenML reading of one value is about 100).</summary>
    public const int MaxReadingLength = 512;

    /// <summary>The longest identity served, in bytes of UTF-8 (the key file's bound).</summary>
    private const int MaxIdentityLength = 128;

    /// <summary>Maps GET (observable) and POST /fleet/{identity} onto <paramref name="server"/> for the devices of <paramref name="devices"/>.</summary>
    /// <param name="server">The server, not yet started.</param>
    /// <param name="devices">The fleet's key store: its identities are the devices.</param>
    public static void Map(CoapServer server, DtlsPskStore devices)
    {
        ArgumentNullException.ThrowIfNull(server);
        ArgumentNullException.ThrowIfNull(devices);
        ConcurrentDictionary<string, Device> fleet = new(StringComparer.Ordinal);

        // The device of a path's identity, made at its first request when the store knows it; null for one outside the fleet.
        Device? Find(string identity)
        {
            if (fleet.TryGetValue(identity, out Device? known))
            {
                return known;
            }

            Span<byte> bytes = stackalloc byte[Encoding.UTF8.GetMaxByteCount(MaxIdentityLength)];
            if (identity.Length > MaxIdentityLength || !devices.TryGetKey(bytes[..Encoding.UTF8.GetBytes(identity, bytes)], out _))
            {
                return null;
            }

            return fleet.GetOrAdd(identity, static _ => new Device());
        }

        server.MapGet("/fleet/{identity}", request =>
        {
            if (Find(request.GetRouteValue("identity")!) is not { } device)
            {
                return new CoapResponse(CoapCode.NotFound);
            }

            return device.Read();
        })
        .WithTitle("A fleet device's last reading; POST by the device itself").WithResourceType("fleet-reading").Produces(CoapContentFormat.SenmlJson).Observable();

        server.MapPost("/fleet/{identity}", request =>
        {
            string identity = request.GetRouteValue("identity")!;
            if (Find(identity) is not { } device)
            {
                return new CoapResponse(CoapCode.NotFound);
            }

            if (!IsDevice(request.Peer.Identity, identity))
            {
                return CoapResponse.Diagnostic(CoapCode.Forbidden, "Only the device itself, by its DTLS pre-shared key identity, may report here.");
            }

            if (request.Payload.Length > MaxReadingLength)
            {
                return CoapResponse.Diagnostic(CoapCode.RequestEntityTooLarge, $"A reading holds at most {MaxReadingLength} bytes.");
            }

            device.Write(request.Payload.Span, request.ContentFormat);

            // RFC 7641 section 4.2: the state changed, so the observers of this path (and no other) get it; the server
            // finds them by path, so a device nobody observes costs a lookup.
            server.NotifyObservers("/fleet/" + identity);
            return new CoapResponse(CoapCode.Changed);
        });
    }

    /// <summary>True when <paramref name="peer"/> proved the pre-shared key named exactly <paramref name="identity"/> (RFC 7252 section 9.1.3.1).</summary>
    private static bool IsDevice(CoapPeerIdentity? peer, string identity)
    {
        if (peer is not { Kind: CoapPeerIdentityKind.PreSharedKey })
        {
            return false;
        }

        // Compared as bytes: the identity's readable name is hexadecimal for one that is not text, which a path could spell.
        Span<byte> expected = stackalloc byte[Encoding.UTF8.GetMaxByteCount(identity.Length)];
        int length = Encoding.UTF8.GetBytes(identity, expected);
        return peer.Value.Span.SequenceEqual(expected[..length]);
    }

    /// <summary>
    /// A device's last reading, in a buffer of its own that each report overwrites: a new object per report, kept in the
    /// device until the next one a minute later, would be promoted by the garbage collector and then die, the costliest
    /// kind of garbage for a server holding a fleet's sessions (benchmarks/RESULTS.md, "A fleet on one host").
    /// </summary>
    private sealed class Device
    {
        private readonly object _gate = new();
        private byte[] _payload = [];
        private int _length = -1;
        private ushort? _contentFormat;

        public void Write(ReadOnlySpan<byte> payload, ushort? contentFormat)
        {
            lock (_gate)
            {
                if (payload.Length > _payload.Length)
                {
                    // Rounded up, so that a reading a few bytes longer than the last (a number with one more digit) fits.
                    _payload = new byte[Math.Min(MaxReadingLength, (payload.Length + 31) & ~31)];
                }

                payload.CopyTo(_payload);
                _length = payload.Length;
                _contentFormat = contentFormat;
            }
        }

        public CoapResponse Read()
        {
            lock (_gate)
            {
                return _length < 0
                    ? new CoapResponse(CoapCode.Content)
                    : CoapResponse.Content(_payload.AsSpan(0, _length).ToArray(), _contentFormat ?? CoapContentFormat.OctetStream);
            }
        }
    }
}
