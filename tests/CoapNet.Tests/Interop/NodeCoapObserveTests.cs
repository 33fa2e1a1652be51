using System.Diagnostics;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Samples.Server;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Interop;

/// <summary>
/// node-coap's observe client against our sample /counter over real loopback UDP: each POST (sent by
/// our client) must reach it as a notification, in order, with a rising Observe value.
/// </summary>
public sealed class NodeCoapObserveTests
{
    [SkippableFact]
    public async Task NodeCoapReceivesACounterNotificationAfterEachPost()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => SampleResources.Map(s));
        Process node = NodeCoap.Start("observe.js", server.Uri("/counter").ToString(), "4", "30");
        try
        {
            List<string> lines = [await ReadLineAsync(node)];
            await using CoapClient client = new();
            for (int i = 1; i <= 3; i++)
            {
                (await client.PostAsync(server.Uri("/counter"), default)).Code.Should().Be(CoapCode.Changed);
                lines.Add(await ReadLineAsync(node));
            }

            lines.Select(l => l.Split(' ')[1]).Should().Equal("0", "1", "2", "3");
            lines.Select(l => uint.Parse(l.Split(' ')[0], System.Globalization.CultureInfo.InvariantCulture)).Should().BeInAscendingOrder().And.OnlyHaveUniqueItems();
        }
        finally
        {
            LibCoap.Stop(node);
        }
    }

    private static async Task<string> ReadLineAsync(Process process)
    {
        using CancellationTokenSource timeout = new(TimeSpan.FromSeconds(20));
        string? line = await process.StandardOutput.ReadLineAsync(timeout.Token);
        return line ?? throw new InvalidOperationException("node-coap ended early: " + await process.StandardError.ReadToEndAsync());
    }
}
