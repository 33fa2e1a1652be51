using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Messaging;

public class CoapTransmissionParametersTests
{
    [Fact]
    public void TheDefaultsAreTheRfcValues()
    {
        // RFC 7252 section 4.8.
        CoapTransmissionParameters parameters = CoapTransmissionParameters.Default;

        parameters.AckTimeout.Should().Be(TimeSpan.FromSeconds(2));
        parameters.AckRandomFactor.Should().Be(1.5);
        parameters.MaxRetransmit.Should().Be(4);
        parameters.NStart.Should().Be(1);
        parameters.DefaultLeisure.Should().Be(TimeSpan.FromSeconds(5));
        parameters.ProbingRate.Should().Be(1);
        parameters.MaxLatency.Should().Be(TimeSpan.FromSeconds(100));
    }

    [Fact]
    public void TheDerivedTimesOfTheDefaultsAreTheRfcValues()
    {
        // RFC 7252 section 4.8.2.
        CoapTransmissionParameters parameters = CoapTransmissionParameters.Default;

        parameters.MaxTransmitSpan.Should().Be(TimeSpan.FromSeconds(45));
        parameters.MaxTransmitWait.Should().Be(TimeSpan.FromSeconds(93));
        parameters.ExchangeLifetime.Should().Be(TimeSpan.FromSeconds(247));
        parameters.NonLifetime.Should().Be(TimeSpan.FromSeconds(145));
    }

    [Fact]
    public void TheDerivedTimesFollowCustomParameters()
    {
        CoapTransmissionParameters parameters = new()
        {
            AckTimeout = TimeSpan.FromSeconds(1),
            AckRandomFactor = 2,
            MaxRetransmit = 3,
            MaxLatency = TimeSpan.FromSeconds(10),
            ProcessingDelay = TimeSpan.FromSeconds(3),
        };

        // 1 s x (2^3 - 1) x 2, 1 s x (2^4 - 1) x 2, span + 2 x latency + processing delay, span + latency.
        parameters.MaxTransmitSpan.Should().Be(TimeSpan.FromSeconds(14));
        parameters.MaxTransmitWait.Should().Be(TimeSpan.FromSeconds(30));
        parameters.ExchangeLifetime.Should().Be(TimeSpan.FromSeconds(14 + 20 + 3));
        parameters.NonLifetime.Should().Be(TimeSpan.FromSeconds(24));
    }

    [Fact]
    public void TheProcessingDelayDefaultsToTheAckTimeout()
    {
        CoapTransmissionParameters parameters = CoapTransmissionParameters.Default with { AckTimeout = TimeSpan.FromSeconds(4) };

        // 4 s x 15 x 1.5 = 90 s, + 200 s, + 4 s.
        parameters.ExchangeLifetime.Should().Be(TimeSpan.FromSeconds(294));
    }

    public static TheoryData<CoapTransmissionParameters, string> InvalidParameters => new()
    {
        { CoapTransmissionParameters.Default with { AckTimeout = TimeSpan.Zero }, "AckTimeout" },
        { CoapTransmissionParameters.Default with { AckTimeout = TimeSpan.FromSeconds(-1) }, "AckTimeout" },
        { CoapTransmissionParameters.Default with { AckRandomFactor = 0.99 }, "AckRandomFactor" },
        { CoapTransmissionParameters.Default with { AckRandomFactor = double.NaN }, "AckRandomFactor" },
        { CoapTransmissionParameters.Default with { AckRandomFactor = double.PositiveInfinity }, "AckRandomFactor" },
        { CoapTransmissionParameters.Default with { MaxRetransmit = -1 }, "MaxRetransmit" },
        { CoapTransmissionParameters.Default with { MaxRetransmit = 21 }, "MaxRetransmit" },
        { CoapTransmissionParameters.Default with { NStart = 0 }, "NStart" },
        { CoapTransmissionParameters.Default with { MaxLatency = TimeSpan.FromSeconds(-1) }, "MaxLatency" },
        { CoapTransmissionParameters.Default with { DefaultLeisure = TimeSpan.FromSeconds(-1) }, "DefaultLeisure" },
        { CoapTransmissionParameters.Default with { ProcessingDelay = TimeSpan.FromSeconds(-1) }, "ProcessingDelay" },
    };

    [Theory]
    [MemberData(nameof(InvalidParameters))]
    public void AnInvalidParameterIsRejectedByName(CoapTransmissionParameters parameters, string name)
    {
        Action validate = parameters.Validate;

        validate.Should().Throw<ArgumentException>().WithMessage($"*{name}*");
    }

    [Theory]
    [MemberData(nameof(InvalidParameters))]
    public void AnEndpointRefusesInvalidParameters(CoapTransmissionParameters parameters, string name)
    {
        InMemoryNetwork network = new();
        using InMemoryTransport transport = network.CreateTransport("10.0.0.1");

        Action create = () => _ = new CoapEndpoint(transport, new CoapEndpointOptions { TransmissionParameters = parameters });

        create.Should().Throw<ArgumentException>().WithMessage($"*{name}*");
    }

    public static TheoryData<Func<CoapEndpointOptions>, string> InvalidOptions => new()
    {
        { () => new CoapEndpointOptions { DeduplicationCapacity = 0 }, nameof(CoapEndpointOptions.DeduplicationCapacity) },
        { () => new CoapEndpointOptions { MaxPeers = 0 }, nameof(CoapEndpointOptions.MaxPeers) },
        { () => new CoapEndpointOptions { TokenLength = 3 }, nameof(CoapEndpointOptions.TokenLength) },
        { () => new CoapEndpointOptions { TokenLength = 9 }, nameof(CoapEndpointOptions.TokenLength) },
        { () => new CoapEndpointOptions { ResponseTimeout = TimeSpan.Zero }, nameof(CoapEndpointOptions.ResponseTimeout) },
    };

    [Theory]
    [MemberData(nameof(InvalidOptions))]
    public void AnEndpointRefusesInvalidOptionsByName(Func<CoapEndpointOptions> options, string name)
    {
        InMemoryNetwork network = new();
        using InMemoryTransport transport = network.CreateTransport("10.0.0.1");

        Action create = () => _ = new CoapEndpoint(transport, options());

        create.Should().Throw<ArgumentException>().Which.ParamName.Should().Be(name);
    }

    [Fact]
    public void ValidCustomParametersAreAccepted()
    {
        CoapTransmissionParameters parameters = new() { AckTimeout = TimeSpan.FromMilliseconds(1), AckRandomFactor = 1, MaxRetransmit = 0, NStart = 10 };

        Action validate = parameters.Validate;

        validate.Should().NotThrow();
    }
}
