using System.Collections.Frozen;
using System.Text;
using CoapNet.Channels;
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
/// The devices are fixed when the resource is mapped (the identities of the server's key file), so no request can make
/// it hold more: an identity outside the fleet gets 4.04. A device costs its table entry, a small object and its last
/// reading (about 200 bytes with a SenML reading), since 100,000 of them share one server.
/// </remarks>
public static class FleetResource
{
    /// <summary>The longest reading kept, in bytes; a longer one gets 4.13 (a SenML reading of one value is about 100).</summary>
    public const int MaxReadingLength = 512;

    /// <summary>Maps GET (observable) and POST /fleet/{identity} onto <paramref name="server"/> for the devices named.</summary>
    /// <param name="server">The server, not yet started.</param>
    /// <param name="identities">The devices' PSK identities.</param>
    /// <exception cref="ArgumentException">An identity is empty or contains '/': it could not be a path segment.</exception>
    public static void Map(CoapServer server, IEnumerable<string> identities)
    {
        ArgumentNullException.ThrowIfNull(server);
        ArgumentNullException.ThrowIfNull(identities);
        Dictionary<string, Device> devices = new(StringComparer.Ordinal);
        foreach (string identity in identities)
        {
            if (string.IsNullOrEmpty(identity) || identity.Contains('/', StringComparison.Ordinal))
            {
                throw new ArgumentException($"'{identity}' cannot be a device of /fleet/{{identity}}: an identity is one non-empty path segment.", nameof(identities));
            }

            devices[identity] = new Device();
        }

        // Read by every request, never changed after mapping: a frozen table is the cheapest to look up.
        FrozenDictionary<string, Device> fleet = devices.ToFrozenDictionary(StringComparer.Ordinal);

        server.MapGet("/fleet/{identity}", request =>
        {
            if (!fleet.TryGetValue(request.GetRouteValue("identity")!, out Device? device))
            {
                return new CoapResponse(CoapCode.NotFound);
            }

            // A registration (RFC 7641 section 3.1, Observe 0) marks the device as observed, so that its POSTs notify:
            // the server's notify-by-path walks every observation of the route, which a POST to an unobserved device
            // need not pay for.
            if (request.Message.Observe == 0)
            {
                device.Observed = true;
            }

            Reading? last = device.Last;
            return last is null ? new CoapResponse(CoapCode.Content) : CoapResponse.Content(last.Payload, last.ContentFormat ?? CoapContentFormat.OctetStream);
        })
        .WithTitle("A fleet device's last reading; POST by the device itself").WithResourceType("fleet-reading").Produces(CoapContentFormat.SenmlJson).Observable();

        server.MapPost("/fleet/{identity}", request =>
        {
            string identity = request.GetRouteValue("identity")!;
            if (!fleet.TryGetValue(identity, out Device? device))
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

            device.Last = new Reading(request.Payload.ToArray(), request.ContentFormat);
            if (device.Observed)
            {
                // RFC 7641 section 4.2: the state changed, so the observers of this path (and no other) get it.
                server.NotifyObservers("/fleet/" + identity);
            }

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

    private sealed class Device
    {
        public volatile Reading? Last;

        public volatile bool Observed;
    }

    private sealed record Reading(byte[] Payload, ushort? ContentFormat);
}
