using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// CoapPathOptions (issue 40): which peers a path names, what its MTU leaves for a message by address family and scheme,
/// the checks of its settings, and the tokens of requests on it (RFC 7252 section 5.3.1, RFC 9175 section 4.2), seen on
/// the wire of the real client and server in virtual time.
/// </summary>
public class PathOptionsTests
{
    [Theory]
    [InlineData("", "Network")]
    [InlineData("10.0.0.1/8", "Network")]
    [InlineData("not an address", "Network")]
    public void APathWithoutAUsableNetworkIsRefused(string network, string named)
        => Invoking(new CoapPathOptions { Network = network, Mtu = 296 }).Should().Throw<ArgumentException>().Which.ParamName.Should().Be(named);

    [Fact]
    public void APathThatSetsNothingIsRefused()
        => Invoking(new CoapPathOptions { Network = "10.0.0.0/8" }).Should().Throw<ArgumentException>().WithMessage("*neither Mtu nor TokenLength*");

    [Theory]
    [InlineData("10.0.0.0/8", 91)]
    [InlineData("2001:db8::/32", 111)]
    [InlineData("10.0.0.0/8", 65536)]
    public void AnMtuThatLeavesNoRoomForAMessageIsRefused(string network, int mtu)
        => Invoking(new CoapPathOptions { Network = network, Mtu = mtu }).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("Mtu");

    [Theory]
    [InlineData("10.0.0.0/8", 92)]
    [InlineData("2001:db8::/32", 112)]
    [InlineData("2001:db8::/32", 1280)]
    public void TheSmallestMtusLeave64BytesForAMessage(string network, int mtu)
        => Invoking(new CoapPathOptions { Network = network, Mtu = mtu }).Should().NotThrow();

    [Theory]
    [InlineData(0)]
    [InlineData(9)]
    public void ATokenLengthOutsideOneToEightIsRefused(int length)
        => Invoking(new CoapPathOptions { Network = "10.0.0.0/8", TokenLength = length }).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("TokenLength");

    [Fact]
    public void TwoPathsForOnePrefixAreRefused()
    {
        CoapEndpointOptions options = new() { Paths = [new() { Network = "10.0.0.0/8", Mtu = 296 }, new() { Network = "10.0.0.0/8", TokenLength = 2 }] };

        Action start = () => _ = new CoapEndpoint(new NullTransport(), options);

        start.Should().Throw<ArgumentException>().WithMessage("*Two paths name the network 10.0.0.0/8*");
    }

    [Fact]
    public void APeerIsOnThePathWithTheLongestPrefixThatHoldsItsAddress()
    {
        CoapPaths paths = CoapPaths.From([
            new CoapPathOptions { Network = "10.0.0.0/8", Mtu = 1280 },
            new CoapPathOptions { Network = "10.64.0.0/10", Mtu = 296 },
            new CoapPathOptions { Network = "10.64.0.7", TokenLength = 2 },
        ]);

        paths.Find(Udp("10.64.1.1"))!.Mtu.Should().Be(296);
        paths.Find(Udp("10.1.1.1"))!.Mtu.Should().Be(1280);
        paths.Find(Udp("10.64.0.7"))!.TokenLength.Should().Be(2, "a single address is a /32");
        paths.Find(Udp("192.0.2.1")).Should().BeNull();
        paths.Find(Udp("::ffff:10.64.1.1"))!.Mtu.Should().Be(296, "an IPv4 peer on a dual-stack socket is matched as IPv4");
    }

    [Fact]
    public void WhatAPathLeavesForAMessageCountsTheHeadersOfTheFamilyAndOfDtls()
    {
        CoapPaths paths = CoapPaths.From([
            new CoapPathOptions { Network = "10.0.0.0/8", Mtu = 296 },
            new CoapPathOptions { Network = "2001:db8::/32", Mtu = 296 },
        ]);
        CoapSecurityContext session = new("DTLS 1.2", CoapPeerIdentity.FromPreSharedKey("device"u8.ToArray()));

        paths.MessageBudget(Udp("10.0.0.5")).Should().Be(296 - 20 - 8);
        paths.MessageBudget(Udp("2001:db8::5")).Should().Be(296 - 40 - 8);
        paths.MessageBudget(Udp("::ffff:10.0.0.5")).Should().Be(296 - 20 - 8, "a mapped IPv4 address travels as IPv4");
        paths.MessageBudget(new CoapPeer(CoapPeer.DtlsScheme, new IPEndPoint(IPAddress.Parse("10.0.0.5"), 5684), session)).Should().Be(296 - 20 - 8 - 13 - 8 - 16, "a DTLS 1.2 record header, explicit nonce and 16-byte tag");
        paths.MessageBudget(Udp("192.0.2.1")).Should().BeNull();
    }

    [Fact]
    public void ShortTokensAreACounterInTheirLength()
    {
        TransferOutcome outcome = TransferSimulation.Run(new TransferSetup { BodyBytes = 20 * 256, TokenLength = 2, Seed = 1 });

        outcome.Completed.Should().BeTrue(outcome.Failure);
        List<string> tokens = Tokens(outcome);
        tokens.Should().HaveCount(20);
        tokens.Should().Equal(Enumerable.Range(0, 20).Select(i => i.ToString("X4", System.Globalization.CultureInfo.InvariantCulture)), "RFC 9175 section 4.2: a sequence number");
    }

    [Fact]
    public void AOneByteCounterGrowsToTwoBytesInsteadOfWrapping()
    {
        // 300 blocks of 16 bytes: 300 requests, more than one byte counts.
        TransferOutcome outcome = TransferSimulation.Run(new TransferSetup { BodyBytes = 300 * 16, BlockSize = 16, TokenLength = 1, Seed = 1 });

        outcome.Completed.Should().BeTrue(outcome.Failure);
        List<string> tokens = Tokens(outcome);
        tokens.Should().HaveCount(300);
        tokens.Should().OnlyHaveUniqueItems("no token is used twice (RFC 9175 section 4.2)");
        tokens.Take(256).Should().OnlyContain(t => t.Length == 2);
        tokens[255].Should().Be("FF");
        tokens[256].Should().Be("0100", "the 257th token is one byte longer, never 00 again");
        tokens.Skip(256).Should().OnlyContain(t => t.Length == 4);
    }

    [Fact]
    public void FromFourBytesTokensStayRandom()
    {
        TransferOutcome outcome = TransferSimulation.Run(new TransferSetup { BodyBytes = 20 * 256, TokenLength = 5, Seed = 1 });

        List<string> tokens = Tokens(outcome);
        tokens.Should().OnlyContain(t => t.Length == 10);
        tokens.Should().OnlyHaveUniqueItems();
        tokens.Select(t => Convert.ToUInt64(t, 16)).Should().NotBeInAscendingOrder("RFC 7252 section 5.3.1: 32 bits of randomness or more");
    }

    [Fact]
    public void APeerOnNoPathKeepsTheEndpointsTokens()
    {
        TransferOutcome outcome = TransferSimulation.Run(new TransferSetup { BodyBytes = 4 * 256, Seed = 1 });

        Tokens(outcome).Should().OnlyContain(t => t.Length == 16, "the endpoint's TokenLength, 8 bytes");
    }

    private static Action Invoking(CoapPathOptions path) => () => _ = new CoapEndpoint(new NullTransport(), new CoapEndpointOptions { Paths = [path] });

    private static CoapPeer Udp(string address) => CoapPeer.Udp(new IPEndPoint(IPAddress.Parse(address), 5683));

    private static List<string> Tokens(TransferOutcome outcome)
        => [.. outcome.Trace.Where(d => d.From.Equals(TransferSimulation.ClientAddress) && d.Message is { Code.IsRequest: true }).Select(d => Convert.ToHexString(d.Parsed.Token.Span))];

    /// <summary>A transport that is never started: the endpoint's constructor is what is tested.</summary>
    private sealed class NullTransport : CoapNet.Transports.IDatagramTransport
    {
        public IPEndPoint LocalEndPoint { get; } = new(IPAddress.Loopback, 5683);

        public void Start(CoapNet.Transports.IDatagramReceiver receiver) => throw new InvalidOperationException("not started in these tests");

        public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote) => throw new InvalidOperationException("not started in these tests");

        public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default) => throw new InvalidOperationException("not started in these tests");

        public void Dispose()
        {
            // Nothing was opened.
        }

        public ValueTask DisposeAsync() => ValueTask.CompletedTask;
    }
}
