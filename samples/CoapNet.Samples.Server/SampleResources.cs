using System.Collections.Concurrent;
using System.Globalization;
using System.Security.Cryptography;
using CoapNet.Blockwise;
using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Samples.Server;

/// <summary>The sample server's resources; the tests map the same ones onto a server of their own.</summary>
public static class SampleResources
{
    /// <summary>The store holds at most this many entries, so a client cannot grow the server without bound.</summary>
    public const int MaxStoreEntries = 1000;

    /// <summary>The longest value the store keeps, in bytes.</summary>
    public const int MaxStoreValueLength = 1024;

    /// <summary>The longest /slow delay, in milliseconds.</summary>
    public const int MaxSlowMilliseconds = 60_000;

    /// <summary>The largest /large body and the largest /upload body: 16 MiB (16,777,216 bytes).</summary>
    public const int MaxTransferSize = 16 * 1024 * 1024;

    /// <summary>
    /// Block-wise settings (RFC 7959) that let the server take a 16 MiB upload in Block1 blocks and
    /// keep a 16 MiB /large body for the follow-up Block2 requests, a few at a time.
    /// </summary>
    public static BlockwiseOptions Blockwise => new()
    {
        MaxUploadSize = MaxTransferSize,
        MaxReassemblyBytes = 4L * MaxTransferSize,
        MaxStoredBytes = 4L * MaxTransferSize,
    };

    /// <summary>Maps /hello, /time, /sensors/temperature, /counter, /echo, /store, /store/{name}, /slow, /large and /upload onto <paramref name="server"/>.</summary>
    /// <param name="server">The server, not yet started.</param>
    /// <param name="time">The clock for /time and /slow; the system clock by default.</param>
    /// <returns>The timer that notifies the observers of /time and /sensors/temperature each second; dispose it with the server.</returns>
    public static IDisposable Map(CoapServer server, TimeProvider? time = null)
    {
        ArgumentNullException.ThrowIfNull(server);
        time ??= TimeProvider.System;

        server.MapGet("/hello", _ => CoapResponse.Content("Hello, CoAP!"))
            .WithTitle("Greeting").WithResourceType("greeting").Produces(CoapContentFormat.TextPlain);

        // Observable (RFC 7641): every observer gets the time once a second.
        CoapRouteBuilder clock = server.MapGet("/time", _ => CoapResponse.Content(time.GetUtcNow().ToString("O", CultureInfo.InvariantCulture)))
            .WithTitle("Server time (UTC)").WithResourceType("time").WithInterface("sensor").Produces(CoapContentFormat.TextPlain).Observable();

        // Observable and numeric, for a chart (the explorer's): degrees Celsius, a sine of period one minute around 20.
        CoapRouteBuilder temperature = server.MapGet("/sensors/temperature", _ => CoapResponse.Content(Temperature(time.GetUtcNow())))
            .WithTitle("Temperature (degrees Celsius), changing every second").WithResourceType("temperature-c").WithInterface("sensor")
            .Produces(CoapContentFormat.TextPlain).Observable();
        ITimer ticker = time.CreateTimer(
            static state =>
            {
                foreach (CoapRouteBuilder route in (CoapRouteBuilder[])state!)
                {
                    route.NotifyObservers();
                }
            },
            new[] { clock, temperature },
            TimeSpan.FromSeconds(1),
            TimeSpan.FromSeconds(1));

        // Observable: each POST increments the count and notifies its observers.
        long count = 0;
        CoapRouteBuilder counter = server.MapGet("/counter", _ => CoapResponse.Content(Interlocked.Read(ref count).ToString(CultureInfo.InvariantCulture)))
            .WithTitle("Counter: POST increments").Produces(CoapContentFormat.TextPlain).Observable();
        server.MapPost("/counter", _ =>
        {
            long now = Interlocked.Increment(ref count);
            counter.NotifyObservers();
            return new CoapResponse(CoapCode.Changed, now.ToString(CultureInfo.InvariantCulture));
        });

        server.MapPost("/echo", request => Echo(CoapCode.Content, request));
        server.MapPut("/echo", request => Echo(CoapCode.Changed, request)).WithTitle("Echo");

        Store store = new();
        server.MapGet("/store", store.List).WithTitle("Key-value store").WithResourceType("store").Produces(CoapContentFormat.TextPlain);
        // Conditional requests (RFC 7252 section 5.10.8): the route's state is each entry's existence and ETag, so
        // If-None-Match (create only) and If-Match (update only this version) get 4.12 when they fail, and a GET
        // with the current ETag gets 2.03 Valid.
        server.MapPut("/store/{name}", store.Put).WithState(store.State);
        server.MapGet("/store/{name}", store.Get);
        server.MapDelete("/store/{name}", store.Delete);

        server.MapGet("/slow", async (request, cancellationToken) =>
        {
            if (!int.TryParse(request.GetQueryValue("ms") ?? "1000", NumberStyles.None, CultureInfo.InvariantCulture, out int ms) || ms > MaxSlowMilliseconds)
            {
                return CoapResponse.Diagnostic(CoapCode.BadRequest, $"ms must be a number from 0 to {MaxSlowMilliseconds}.");
            }

            await Task.Delay(TimeSpan.FromMilliseconds(ms), time, cancellationToken).ConfigureAwait(false);
            return CoapResponse.Content($"Slept {ms} ms.");
        }).WithTitle("Answers after ?ms=N milliseconds").Produces(CoapContentFormat.TextPlain);

        server.MapGet("/large", request =>
        {
            if (!int.TryParse(request.GetQueryValue("size") ?? "1024", NumberStyles.None, CultureInfo.InvariantCulture, out int size) || size > MaxTransferSize)
            {
                return CoapResponse.Diagnostic(CoapCode.BadRequest, $"size must be a number from 0 to {MaxTransferSize}.");
            }

            // Deterministic content: the byte at offset i is i mod 251, generated as read, so 16 MiB cost
            // no memory. A body that does not fit one message goes out in Block2 blocks (RFC 7959), each
            // read from the stream when the client asks for it.
            return CoapResponse.Content(new DeterministicStream(size), CoapContentFormat.OctetStream);
        }).WithTitle("?size=N deterministic bytes").Produces(CoapContentFormat.OctetStream);

        // The body arrives whole: the server joined its Block1 blocks first (RFC 7959 section 2.5).
        server.MapPut("/upload", request => new CoapResponse(CoapCode.Changed, Convert.ToHexString(SHA256.HashData(request.Payload.Span)).ToLowerInvariant()))
            .WithTitle("PUT a body (block-wise when large); answers its SHA-256 in hex").Produces(CoapContentFormat.TextPlain);

        return ticker;
    }

    /// <summary>The temperature /sensors/temperature reports at <paramref name="now"/>, in degrees Celsius with two decimals.</summary>
    /// <param name="now">The time.</param>
    /// <returns>The value as text, such as "21.37".</returns>
    public static string Temperature(DateTimeOffset now)
        => (20 + (5 * Math.Sin(2 * Math.PI * now.ToUnixTimeMilliseconds() / 60_000.0))).ToString("F2", CultureInfo.InvariantCulture);

    private static CoapResponse Echo(CoapCode code, CoapRequest request) => new(code, request.Payload, request.ContentFormat);

    /// <summary>
    /// An in-memory key-value store: PUT creates (2.01) or replaces (2.04), GET returns (2.05 with ETag) or 4.04, DELETE
    /// removes (2.02); each honours If-Match and If-None-Match (4.12 when they fail).
    /// </summary>
    private sealed class Store
    {
        private readonly ConcurrentDictionary<string, Entry> _entries = new(StringComparer.Ordinal);

        public CoapResponse List(CoapRequest request) => CoapResponse.Content(string.Join('\n', _entries.Keys.Order(StringComparer.Ordinal)));

        /// <summary>The entry's existence and ETag, which the server evaluates conditional requests against before a handler runs.</summary>
        public CoapResourceState? State(CoapRequest request) => StateOf(request.GetRouteValue("name")!);

        public CoapResponse Put(CoapRequest request)
        {
            string name = request.GetRouteValue("name")!;
            if (request.Payload.Length > MaxStoreValueLength)
            {
                return CoapResponse.Diagnostic(CoapCode.RequestEntityTooLarge, $"A value holds at most {MaxStoreValueLength} bytes.");
            }

            Entry entry = new(request.Payload.ToArray(), request.ContentFormat);
            bool replaced = false;
            lock (_entries)
            {
                // The server checked the conditions before this handler ran; checked again here, under the lock, a
                // create-only PUT (If-None-Match) cannot overwrite an entry another request made in between.
                if (request.EvaluateConditions(StateOf(name)) is { } failed)
                {
                    return failed;
                }

                if (_entries.ContainsKey(name))
                {
                    replaced = true;
                }
                else if (_entries.Count >= MaxStoreEntries)
                {
                    return CoapResponse.Diagnostic(CoapCode.Forbidden, $"The store is full ({MaxStoreEntries} entries).");
                }

                _entries[name] = entry;
            }

            CoapResponse response = new(replaced ? CoapCode.Changed : CoapCode.Created);
            if (!replaced)
            {
                // One Location-Path option per segment: the name may itself contain '/' (sent as %2F).
                response.Message.Options.Add(CoapOptionNumber.LocationPath, "store");
                response.Message.Options.Add(CoapOptionNumber.LocationPath, name);
            }

            return response;
        }

        public CoapResponse Get(CoapRequest request)
        {
            if (!_entries.TryGetValue(request.GetRouteValue("name")!, out Entry? entry))
            {
                return new CoapResponse(CoapCode.NotFound);
            }

            CoapResponse response = new(CoapCode.Content, entry.Value, entry.ContentFormat);
            response.Message.ETag = entry.ETag;
            return response;
        }

        public CoapResponse Delete(CoapRequest request)
        {
            string name = request.GetRouteValue("name")!;
            lock (_entries)
            {
                // As in Put: a DELETE with If-Match removes only the version it names, even if it changed meanwhile.
                if (request.EvaluateConditions(StateOf(name)) is { } failed)
                {
                    return failed;
                }

                // RFC 7252 section 5.8.4: DELETE of a resource that does not exist also answers 2.02.
                _entries.TryRemove(name, out _);
            }

            return new CoapResponse(CoapCode.Deleted);
        }

        private CoapResourceState StateOf(string name)
            => _entries.TryGetValue(name, out Entry? entry) ? CoapResourceState.WithETag(entry.ETag.Span) : CoapResourceState.Missing;

        private sealed class Entry(byte[] value, ushort? contentFormat)
        {
            public byte[] Value { get; } = value;

            public ushort? ContentFormat { get; } = contentFormat;

            // RFC 7252 section 5.10.6: an ETag identifies this representation; 8 bytes of its hash do.
            public ReadOnlyMemory<byte> ETag { get; } = SHA256.HashData(value).AsMemory(0, 8);
        }
    }
}
