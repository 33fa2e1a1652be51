using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Packaging;

/// <summary>
/// The transport sample (samples/CoapNet.Samples.Transport, built with the solution): a transport of its own, registered
/// by its scheme, carries a server's answers to a client end to end, block-wise transfer included.
/// </summary>
public sealed class TransportSampleTests
{
    [Fact]
    public async Task TheSamplesSerialLineCarriesAServersAnswersToAClientByItsOwnScheme()
    {
        using ChildProcess sample = ChildProcess.StartDll(Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Transport.dll"), [], _ => { });

        (await sample.WaitForExitAsync(TimeSpan.FromSeconds(60))).Should().Be(0, sample.Output);
        sample.Output.Should().Contain("Listening on coap+serial://127.0.0.2:1/")
            .And.Contain("GET /hello: 2.05 Content Hello over the line!")
            .And.Contain("GET /firmware: 2.05 Content, 4000 bytes, intact");
    }
}
