using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using CoapNet.LinkFormat;
using CoapNet.Messages;
using CoapNet.Samples.Server;

namespace CoapNet.Tests.Server;

/// <summary>
/// The sample server's resources, mapped onto a server on 127.0.0.1, and what each method on each of
/// them must answer. Written once, run through every client (libcoap's coap-client, and our
/// <see cref="Client.CoapClient"/> in its synchronous and asynchronous forms) over every transport
/// (coap:// over UDP, coap+tcp:// over TCP).
/// </summary>
public abstract class SampleResourceBehaviour : IAsyncLifetime
{
    private LoopbackServer? _server;

    private protected SampleResourceBehaviour(string scheme = "coap") => Scheme = scheme;

    /// <summary>The scheme the suite runs over: "coap" or "coap+tcp".</summary>
    private protected string Scheme { get; }

    /// <summary>True over UDP, where a response is piggybacked or separate; TCP has no such distinction (RFC 8323 section 3.2).</summary>
    private protected bool HasMessageTypes => Scheme == "coap";

    private protected LoopbackServer Server => _server ?? throw new InvalidOperationException("Not initialized.");

    public virtual Task InitializeAsync()
    {
        // SeparateResponseDelay 0.5 s (default 1 s): /slow?ms=1500 is answered separately even on a slow machine.
        _server = LoopbackServer.Start(s => SampleResources.Map(s), LoopbackServer.Options(separateResponseDelay: TimeSpan.FromMilliseconds(500), tcp: !HasMessageTypes));
        return Task.CompletedTask;
    }

    public virtual async Task DisposeAsync()
    {
        if (_server is not null)
        {
            await _server.DisposeAsync();
        }
    }

    [SkippableFact]
    public async Task DiscoveryListsEverySampleResourceWithItsAttributes()
    {
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Get, "/.well-known/core"));

        reply.Code.Should().Be(CoapCode.Content);
        reply.ContentFormat.Should().Be(CoapContentFormat.LinkFormat);
        Dictionary<string, CoapLink> links = CoapLinkFormat.Parse(reply.Text).ToDictionary(link => link.Target);
        links.Keys.Should().BeEquivalentTo(
            ["/hello", "/time", "/sensors/temperature", "/counter", "/echo", "/store", "/slow", "/large", "/upload"],
            "every sample resource is listed; /store/{name} is a template, not a link, and /.well-known/core is not listed");

        links["/hello"].Title.Should().Be("Greeting");
        links["/hello"].ResourceTypes.Should().Equal("greeting");
        links["/hello"].ContentFormats.Should().Equal(CoapContentFormat.TextPlain);

        links["/sensors/temperature"].IsObservable.Should().BeTrue("the explorer charts its notifications");
        links["/sensors/temperature"].ContentFormats.Should().Equal(CoapContentFormat.TextPlain);

        links["/time"].Title.Should().Be("Server time (UTC)");
        links["/time"].ResourceTypes.Should().Equal("time");
        links["/time"].InterfaceDescriptions.Should().Equal("sensor");
        links["/time"].ContentFormats.Should().Equal(CoapContentFormat.TextPlain);

        links["/echo"].Title.Should().Be("Echo");
        links["/echo"].HasAttribute("ct").Should().BeFalse("/echo answers in whatever format it was sent");

        links["/store"].Title.Should().Be("Key-value store");
        links["/store"].ResourceTypes.Should().Equal("store");
        links["/store"].ContentFormats.Should().Equal(CoapContentFormat.TextPlain);

        links["/slow"].Title.Should().Be("Answers after ?ms=N milliseconds");
        links["/slow"].ContentFormats.Should().Equal(CoapContentFormat.TextPlain);

        links["/large"].Title.Should().Be("?size=N deterministic bytes");
        links["/large"].ContentFormats.Should().Equal(CoapContentFormat.OctetStream);

        links["/upload"].Title.Should().Be("PUT a body (block-wise when large); answers its SHA-256 in hex");
        links["/upload"].ContentFormats.Should().Equal(CoapContentFormat.TextPlain);
    }

    [SkippableFact]
    public async Task UploadAnswersChangedWithTheSha256OfTheBody()
    {
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Put, "/upload") { Payload = "firmware" });

        reply.Code.Should().Be(CoapCode.Changed);
        reply.ContentFormat.Should().Be(CoapContentFormat.TextPlain);
        reply.Text.Should().Be(Convert.ToHexString(SHA256.HashData(Utf8("firmware"))).ToLowerInvariant());
    }

    [SkippableFact]
    public async Task DiscoveryFilteredByResourceTypeListsOnlyTheMatchingResource()
    {
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Get, "/.well-known/core?rt=time"));

        reply.Code.Should().Be(CoapCode.Content);
        CoapLinkFormat.Parse(reply.Text).Select(link => link.Target).Should().Equal("/time");
    }

    [SkippableFact]
    public async Task DiscoveryFilteredByAnHrefPrefixListsOnlyTheMatchingResources()
    {
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Get, "/.well-known/core?href=/st*"));

        reply.Code.Should().Be(CoapCode.Content);
        CoapLinkFormat.Parse(reply.Text).Select(link => link.Target).Should().Equal("/store");
    }

    [SkippableFact]
    public async Task DiscoveryFilteredByAnInterfaceOrAContentFormatListsOnlyTheMatchingResources()
    {
        SampleReply sensors = await SendAsync(new SampleRequest(CoapCode.Get, "/.well-known/core?if=sensor"));
        SampleReply binary = await SendAsync(new SampleRequest(CoapCode.Get, "/.well-known/core?ct=42"));

        CoapLinkFormat.Parse(sensors.Text).Select(link => link.Target).Should().Equal("/time", "/sensors/temperature");
        CoapLinkFormat.Parse(binary.Text).Select(link => link.Target).Should().Equal("/large");
    }

    [SkippableFact]
    public async Task HelloAnswersWithAPlainTextGreeting()
    {
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Get, "/hello"));

        reply.Code.Should().Be(CoapCode.Content);
        reply.ContentFormat.Should().Be(CoapContentFormat.TextPlain);
        reply.Text.Should().Be("Hello, CoAP!");
        if (HasMessageTypes)
        {
            reply.Separate.Should().BeFalse("a fast handler's response is piggybacked in the ACK");
        }
    }

    [SkippableFact]
    public async Task TimeAnswersWithTheCurrentTimeAsAnIso8601UtcTimestamp()
    {
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Get, "/time"));

        reply.Code.Should().Be(CoapCode.Content);
        reply.ContentFormat.Should().Be(CoapContentFormat.TextPlain);
        DateTimeOffset time = DateTimeOffset.ParseExact(reply.Text, "O", CultureInfo.InvariantCulture, DateTimeStyles.None);
        time.Offset.Should().Be(TimeSpan.Zero, "the time is UTC");
        time.Should().BeCloseTo(DateTimeOffset.UtcNow, TimeSpan.FromMinutes(5));
    }

    [SkippableFact]
    public async Task PostToEchoAnswersContentWithThePayloadAndItsContentFormat()
    {
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Post, "/echo") { Payload = "{\"on\":true}", ContentFormat = CoapContentFormat.Json });

        reply.Code.Should().Be(CoapCode.Content);
        reply.Text.Should().Be("{\"on\":true}");
        reply.ContentFormat.Should().Be(CoapContentFormat.Json);
    }

    [SkippableFact]
    public async Task PutToEchoAnswersChangedWithThePayloadAndItsContentFormat()
    {
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Put, "/echo") { Payload = "hi there", ContentFormat = CoapContentFormat.TextPlain });

        reply.Code.Should().Be(CoapCode.Changed);
        reply.Text.Should().Be("hi there");
        reply.ContentFormat.Should().Be(CoapContentFormat.TextPlain);
    }

    [SkippableFact]
    public async Task TheStoreCreatesReplacesReturnsListsAndDeletesAnEntry()
    {
        SampleReply created = await SendAsync(new SampleRequest(CoapCode.Put, "/store/lamp") { Payload = "on", ContentFormat = CoapContentFormat.TextPlain });
        created.Code.Should().Be(CoapCode.Created);
        created.LocationPath.Should().Equal("store", "lamp");

        SampleReply replaced = await SendAsync(new SampleRequest(CoapCode.Put, "/store/lamp") { Payload = "off", ContentFormat = CoapContentFormat.TextPlain });
        replaced.Code.Should().Be(CoapCode.Changed);

        (await SendAsync(new SampleRequest(CoapCode.Put, "/store/fan") { Payload = "fast" })).Code.Should().Be(CoapCode.Created);

        SampleReply read = await SendAsync(new SampleRequest(CoapCode.Get, "/store/lamp"));
        read.Code.Should().Be(CoapCode.Content);
        read.Text.Should().Be("off");
        read.ContentFormat.Should().Be(CoapContentFormat.TextPlain);
        read.ETag.Should().Equal(SHA256.HashData("off"u8).AsSpan(0, 8).ToArray(), "the ETag identifies the stored representation");

        SampleReply listing = await SendAsync(new SampleRequest(CoapCode.Get, "/store"));
        listing.Code.Should().Be(CoapCode.Content);
        listing.Text.Should().Be("fan\nlamp");

        (await SendAsync(new SampleRequest(CoapCode.Delete, "/store/lamp"))).Code.Should().Be(CoapCode.Deleted);
        (await SendAsync(new SampleRequest(CoapCode.Get, "/store/lamp"))).Code.Should().Be(CoapCode.NotFound);
        (await SendAsync(new SampleRequest(CoapCode.Get, "/store"))).Text.Should().Be("fan");
    }

    [SkippableFact]
    public async Task AnEntryIsCreatedOnlyOnceWithIfNoneMatch()
    {
        // RFC 7252 section 5.10.8.2: If-None-Match makes a PUT create-only; on an existing entry the server must not perform it.
        SampleReply created = await SendAsync(new SampleRequest(CoapCode.Put, "/store/door") { Payload = "first", Options = [IfNoneMatch] });
        SampleReply again = await SendAsync(new SampleRequest(CoapCode.Put, "/store/door") { Payload = "second", Options = [IfNoneMatch] });
        SampleReply read = await SendAsync(new SampleRequest(CoapCode.Get, "/store/door"));

        created.Code.Should().Be(CoapCode.Created);
        again.Code.Should().Be(CoapCode.PreconditionFailed);
        again.Text.Should().Be("If-None-Match: the resource exists.");
        read.Text.Should().Be("first", "the failed PUT was not performed");
    }

    [SkippableFact]
    public async Task AnEntryChangesOnlyWhenIfMatchNamesItsCurrentETag()
    {
        // RFC 7252 section 5.10.8.1: If-Match with ETags holds when one is the current one; an empty one when the entry exists.
        byte[] first = SHA256.HashData("v1"u8).AsSpan(0, 8).ToArray();
        byte[] second = SHA256.HashData("v2"u8).AsSpan(0, 8).ToArray();
        (await SendAsync(new SampleRequest(CoapCode.Put, "/store/valve") { Payload = "v1" })).Code.Should().Be(CoapCode.Created);

        SampleReply stale = await SendAsync(new SampleRequest(CoapCode.Put, "/store/valve") { Payload = "v2", Options = [IfMatch(second)] });
        SampleReply current = await SendAsync(new SampleRequest(CoapCode.Put, "/store/valve") { Payload = "v2", Options = [IfMatch(second), IfMatch(first)] });
        SampleReply anyVersion = await SendAsync(new SampleRequest(CoapCode.Put, "/store/valve") { Payload = "v3", Options = [IfMatch([])] });
        SampleReply missing = await SendAsync(new SampleRequest(CoapCode.Put, "/store/pump") { Payload = "x", Options = [IfMatch([])] });
        SampleReply staleDelete = await SendAsync(new SampleRequest(CoapCode.Delete, "/store/valve") { Options = [IfMatch(first)] });
        SampleReply read = await SendAsync(new SampleRequest(CoapCode.Get, "/store/valve"));

        stale.Code.Should().Be(CoapCode.PreconditionFailed);
        stale.Text.Should().Be("If-Match: no ETag given is the current one.");
        current.Code.Should().Be(CoapCode.Changed, "one of the If-Match ETags is the current one");
        anyVersion.Code.Should().Be(CoapCode.Changed, "an empty If-Match holds for any current representation");
        missing.Code.Should().Be(CoapCode.PreconditionFailed);
        missing.Text.Should().Be("If-Match: the resource does not exist.");
        (await SendAsync(new SampleRequest(CoapCode.Get, "/store/pump"))).Code.Should().Be(CoapCode.NotFound, "the PUT with a failed If-Match created nothing");
        staleDelete.Code.Should().Be(CoapCode.PreconditionFailed);
        read.Text.Should().Be("v3", "neither failed request was performed");
    }

    [SkippableFact]
    public async Task AGetWithTheCurrentETagIsAnsweredValidWithoutTheBody()
    {
        // RFC 7252 sections 5.10.6.2 and 5.9.1.3: 2.03 Valid carries the ETag that is valid and no payload.
        byte[] etag = SHA256.HashData("on"u8).AsSpan(0, 8).ToArray();
        (await SendAsync(new SampleRequest(CoapCode.Put, "/store/light") { Payload = "on" })).Code.Should().Be(CoapCode.Created);

        SampleReply valid = await SendAsync(new SampleRequest(CoapCode.Get, "/store/light") { Options = [ETag([9, 9]), ETag(etag)] });
        SampleReply changed = await SendAsync(new SampleRequest(CoapCode.Get, "/store/light") { Options = [ETag([9, 9])] });

        valid.Code.Should().Be(CoapCode.Valid);
        valid.ETag.Should().Equal(etag);
        valid.Payload.Should().BeEmpty();
        changed.Code.Should().Be(CoapCode.Content);
        changed.Text.Should().Be("on");
    }

    [SkippableFact]
    public async Task IfMatchOnAResourceWithoutStateIsBadOption()
    {
        // RFC 7252 section 5.4.1: /hello has nothing to evaluate If-Match against, so it cannot honour it and must not ignore it.
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Get, "/hello") { Options = [IfMatch([])] });

        reply.Code.Should().Be(CoapCode.BadOption);
        reply.Text.Should().Contain("If-Match");
    }

    private static (ushort, byte[]) IfNoneMatch => ((ushort)CoapOptionNumber.IfNoneMatch, []);

    private static (ushort, byte[]) IfMatch(byte[] etag) => ((ushort)CoapOptionNumber.IfMatch, etag);

    private static (ushort, byte[]) ETag(byte[] etag) => ((ushort)CoapOptionNumber.ETag, etag);

    [SkippableFact]
    public async Task AStoreNameWithASlashStaysOneSegmentInTheLocationOfTheNewEntry()
    {
        SampleReply created = await SendAsync(new SampleRequest(CoapCode.Put, "/store/a%2Fb") { Payload = "x" });
        SampleReply read = await SendAsync(new SampleRequest(CoapCode.Get, "/store/a%2Fb"));

        created.Code.Should().Be(CoapCode.Created);
        created.LocationPath.Should().Equal(["store", "a/b"], "the Location-Path names the entry just created");
        read.Text.Should().Be("x");
    }

    [SkippableFact]
    public async Task LargeAnswersWithTheRequestedNumberOfBytesEachItsOffsetModulo251()
    {
        SampleReply small = await SendAsync(new SampleRequest(CoapCode.Get, "/large?size=100"));
        SampleReply wrapping = await SendAsync(new SampleRequest(CoapCode.Get, "/large?size=600"));

        small.Code.Should().Be(CoapCode.Content);
        small.ContentFormat.Should().Be(CoapContentFormat.OctetStream);
        small.Payload.Should().Equal(Enumerable.Range(0, 100).Select(i => (byte)(i % 251)));
        wrapping.Code.Should().Be(CoapCode.Content);
        wrapping.Payload.Should().Equal(Enumerable.Range(0, 600).Select(i => (byte)(i % 251)));
    }

    [SkippableFact]
    public async Task LargeBeyondOneMessageArrivesWholeAndNeverTruncated()
    {
        // Over UDP the body travels in Block2 blocks (RFC 7959) that the client joins. Over TCP it is one
        // frame up to the client's CSM Max-Message-Size (RFC 8323 section 5.3.1): 64 KiB for ours, so a
        // megabyte is refused with 5.00 and a diagnostic; libcoap's takes a megabyte, so it arrives whole.
        int size = HasMessageTypes ? 5000 : 1_000_000;
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Get, $"/large?size={size}"));
        if (reply.Code == CoapCode.Content)
        {
            reply.Payload.Should().Equal(Enumerable.Range(0, size).Select(i => (byte)(i % 251)), "a body arrives whole or not at all");
            return;
        }

        HasMessageTypes.Should().BeFalse("over UDP a large body travels block-wise");
        reply.Code.Should().Be(CoapCode.InternalServerError);
        reply.ContentFormat.Should().BeNull("a diagnostic payload has no Content-Format (RFC 7252 section 5.5.2)");
        reply.Text.Should().StartWith("The response cannot be sent").And.Contain("Max-Message-Size");
        reply.Payload.Take(4).Should().NotEqual(new byte[] { 0, 1, 2, 3 }, "no part of the body is sent");
    }

    [SkippableFact]
    public async Task LargeUpToTheMessageSizeInForceArrivesWhole()
    {
        // One datagram (1152 bytes) over UDP; over TCP a frame may be as large as the peer's CSM allows.
        int size = HasMessageTypes ? 1100 : 5000;
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Get, $"/large?size={size}"));

        reply.Code.Should().Be(CoapCode.Content);
        reply.Payload.Should().Equal(Enumerable.Range(0, size).Select(i => (byte)(i % 251)));
    }

    [SkippableFact]
    public async Task AnUnknownPathIsNotFound()
    {
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Get, "/no/such/resource"));

        reply.Code.Should().Be(CoapCode.NotFound);
    }

    [SkippableFact]
    public async Task AMethodTheResourceDoesNotOfferIsMethodNotAllowed()
    {
        SampleReply delete = await SendAsync(new SampleRequest(CoapCode.Delete, "/hello"));
        SampleReply post = await SendAsync(new SampleRequest(CoapCode.Post, "/store/lamp") { Payload = "x" });

        delete.Code.Should().Be(CoapCode.MethodNotAllowed);
        delete.Text.Should().Be("Allowed: GET");
        post.Code.Should().Be(CoapCode.MethodNotAllowed);
        post.Text.Should().Be("Allowed: GET, PUT, DELETE");
    }

    [SkippableFact]
    public async Task AnUnrecognizedCriticalOptionIsBadOption()
    {
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Get, "/hello") { Options = [(65001, "x"u8.ToArray())] });

        reply.Code.Should().Be(CoapCode.BadOption);
        reply.Text.Should().Contain("65001");
    }

    [SkippableFact]
    public async Task AnUnrecognizedElectiveOptionIsIgnored()
    {
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Get, "/hello") { Options = [(65000, "x"u8.ToArray())] });

        reply.Code.Should().Be(CoapCode.Content);
        reply.Text.Should().Be("Hello, CoAP!");
    }

    [SkippableFact]
    public async Task AnAcceptTheResourceDoesNotProduceIsNotAcceptable()
    {
        SampleReply json = await SendAsync(new SampleRequest(CoapCode.Get, "/hello") { Accept = CoapContentFormat.Json });
        SampleReply text = await SendAsync(new SampleRequest(CoapCode.Get, "/hello") { Accept = CoapContentFormat.TextPlain });

        json.Code.Should().Be(CoapCode.NotAcceptable);
        text.Code.Should().Be(CoapCode.Content);
    }

    [SkippableFact]
    public async Task ASlowHandlersResponseArrivesSeparatelyAfterAnEmptyAcknowledgement()
    {
        SampleReply reply = await SendAsync(new SampleRequest(CoapCode.Get, "/slow?ms=1500"));

        reply.Code.Should().Be(CoapCode.Content);
        reply.Text.Should().Be("Slept 1500 ms.");
        if (HasMessageTypes)
        {
            reply.Separate.Should().BeTrue("the handler took longer than SeparateResponseDelay");
        }
    }

    [SkippableFact]
    public async Task AnInvalidQueryIsBadRequestWithADiagnostic()
    {
        SampleReply slow = await SendAsync(new SampleRequest(CoapCode.Get, "/slow?ms=soon"));
        SampleReply large = await SendAsync(new SampleRequest(CoapCode.Get, "/large?size=-1"));
        SampleReply tooLarge = await SendAsync(new SampleRequest(CoapCode.Get, "/large?size=16777217"));

        slow.Code.Should().Be(CoapCode.BadRequest);
        slow.Text.Should().Contain("ms must be");
        large.Code.Should().Be(CoapCode.BadRequest);
        large.Text.Should().Contain("size must be");
        tooLarge.Code.Should().Be(CoapCode.BadRequest, "16 MiB is the most /large serves");
        tooLarge.Text.Should().Be("size must be a number from 0 to 16777216.");
    }

    /// <summary>Sends <paramref name="request"/> to <see cref="Server"/> through the client under test.</summary>
    private protected abstract Task<SampleReply> SendAsync(SampleRequest request);

    private protected static byte[] Utf8(string? text) => text is null ? [] : Encoding.UTF8.GetBytes(text);
}
