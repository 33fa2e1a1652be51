using System.Collections.Concurrent;
using System.Globalization;
using System.Net;
using CoapNet.Messages;
using CoapNet.Multicast;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using Xunit.Abstractions;

namespace CoapNet.Tests.Multicast;

/// <summary>
/// Observe on a group end to end in a network of namespaces (<see cref="TestNetwork"/>; RFC 7641 with
/// draft-ietf-core-groupcomm-bis): node 1 observes /level with one group GET, nodes 2 to 4 are servers of ours, made in
/// their namespaces, whose every notification is confirmable, so each one's ACK must find the group endpoint that sent it.
/// </summary>
public sealed class GroupObserveNetworkTests(ITestOutputHelper output)
{
    private static readonly Uri Level = new("coap://224.0.1.187/level");

    [SkippableFact]
    public async Task OneGroupObservationGetsEachOfThreeServersNotificationsAndCancelingDeregistersEveryOne()
    {
        using TestNetwork network = new(nodes: 4);
        using CancellationTokenSource cancel = new();
        List<LevelServer> servers = [];
        try
        {
            for (int node = 2; node <= 4; node++)
            {
                servers.Add(LevelServer.Start(network, node));
            }

            ConcurrentQueue<CoapGroupResponse> seen = new();
            Task observing = network.Run(1, () => new CoapGroupClient().ObserveAsync(
                CoapMessage.CreateRequest(CoapCode.Get, Level, CoapMessageType.NonConfirmable), Level, seen.Enqueue, cancel.Token));

            await Wait.UntilAsync(() => Members(seen, "0").Count == 3, "each server answers the group GET with its state and Observe");
            servers.Should().OnlyContain(s => s.Server.Observations == 1, "each server registered the group GET as an observation");

            // Three changes at each server, one after the other: with every notification CON, the next one goes only once
            // the ACK of the last reached the group endpoint that sent it (RFC 7641 section 4.5.2).
            for (int round = 1; round <= 3; round++)
            {
                string level = round.ToString(CultureInfo.InvariantCulture);
                servers.ForEach(s => s.Change(round).Should().Be(1, "the server notifies its one observer"));
                await Wait.UntilAsync(() => Members(seen, level).Count == 3, $"each server's notification {level} arrives");
            }

            foreach (CoapGroupResponse response in seen)
            {
                output.WriteLine($"{response.Responder}: {response.Response.Code} {response.Response.Type} Observe={response.Response.Observe} {response.Response.GetPayloadString()}");
            }

            Members(seen, "3").Should().BeEquivalentTo(["10.200.0.2", "10.200.0.3", "10.200.0.4"], "each notification comes from its server's unicast address");
            seen.Should().OnlyContain(r => r.Response.Observe != null && r.Response.Code == CoapCode.Content);
            seen.Should().HaveCount(12, "a first response and three notifications from each server, each reported once");

            cancel.Cancel();
            Func<Task> ending = () => observing;
            await ending.Should().ThrowAsync<OperationCanceledException>();

            servers.Should().OnlyContain(s => s.Server.Observations == 0, "the client deregistered from each server (RFC 7641 section 3.6) before its observation ended");
            servers.ForEach(s => s.Change(4).Should().Be(0, "a change after the cancel notifies no one"));
        }
        finally
        {
            // Also when an assertion failed: the observation ends rather than outlive the test.
            cancel.Cancel();
            foreach (LevelServer server in servers)
            {
                await server.Server.DisposeAsync();
            }
        }
    }

    /// <summary>The addresses of the members whose response with payload <paramref name="level"/> has arrived.</summary>
    private static List<string> Members(IEnumerable<CoapGroupResponse> seen, string level)
        => seen.Where(r => r.Response.GetPayloadString() == level).Select(r => r.Responder.Address.ToString()).Distinct().ToList();

    /// <summary>A server of ours in node N's namespace: joins All CoAP Nodes on its interface and serves an observable /level.</summary>
    private sealed class LevelServer
    {
        private int _level;

        private LevelServer(CoapServer server) => Server = server;

        public CoapServer Server { get; }

        /// <summary>Made, and its interface looked up and sockets bound, on a thread in the node's namespace.</summary>
        public static LevelServer Start(TestNetwork network, int node) => network.Run(node, () =>
        {
            CoapServerOptions options = new();
            options.Observe.ConfirmableNotifications = true;
            options.ListenMulticast(multicast =>
            {
                multicast.Interfaces.Add(TestNetwork.Interface);
                multicast.Leisure = TimeSpan.FromMilliseconds(500);
            });
            LevelServer made = new(new CoapServer(options));
            made.Server.MapGet("/level", _ => CoapResponse.Content(Volatile.Read(ref made._level).ToString(CultureInfo.InvariantCulture))).Observable();
            made.Server.Start();
            return made;
        });

        /// <summary>Sets the level and notifies the observers; returns how many there were.</summary>
        public int Change(int level)
        {
            Volatile.Write(ref _level, level);
            return Server.NotifyObservers("/level");
        }
    }
}
