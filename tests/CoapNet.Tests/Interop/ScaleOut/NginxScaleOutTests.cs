using System.Net;
using System.Security.Cryptography;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Interop.ScaleOut;

/// <summary>
/// Scale-out behind a real load balancer (docs/DEPLOYMENT.md): two sample server processes behind nginx's stream
/// proxy on loopback, coap:// and coap+tcp:// on one port. A peer's block-wise transfers and observations are state
/// in one instance, so they stay correct only while the balancer keeps the peer there. Over UDP the clients bind
/// different loopback addresses (127.0.0.N) until one lands on each instance (nginx hashes the address); over TCP
/// the client connects from 127.0.0.1, and a connection stays on one instance for its life.
/// </summary>
public sealed class NginxScaleOutTests : IClassFixture<ScaleOutFixture>
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(30);

    private readonly ScaleOutFixture _fixture;

    public NginxScaleOutTests(ScaleOutFixture fixture) => _fixture = fixture;

    /// <summary>UDP and TCP.</summary>
    public static TheoryData<string> Schemes => new() { "coap", "coap+tcp" };

    [SkippableTheory, MemberData(nameof(Schemes))]
    public async Task BlockwiseUploadsAndDownloadsStayWholeThroughNginx(string scheme)
    {
        await using ClientsOnInstances clients = await ClientsOnInstances.FindAsync(await _fixture.GetAsync(), scheme);
        ScaleOutDeployment deployment = clients.Deployment;
        byte[] body = new byte[200_000];
        new Random(25).NextBytes(body);
        string expectedHash = Convert.ToHexString(SHA256.HashData(body)).ToLowerInvariant();

        foreach ((CoapClient client, SampleServerProcess instance) in clients.Placed)
        {
            // RFC 7959 section 2.5: the instance joins the Block1 blocks of one peer; a block that reached the other
            // instance, or came from another nginx session (another source port), would get 4.08.
            using CancellationTokenSource timeout = new(Liveness);
            CoapResponse uploaded = await client.UploadAsync(deployment.Nginx.Uri(scheme, "/upload"), new MemoryStream(body), cancellationToken: timeout.Token);
            uploaded.Code.Should().Be(CoapCode.Changed, $"the upload through nginx to {instance.EndPoint} is whole: {uploaded.GetPayloadString()}");
            uploaded.GetPayloadString().Should().Be(expectedHash);

            CoapResponse downloaded = await client.GetAsync(deployment.Nginx.Uri(scheme, "/large?size=300000"), timeout.Token);
            downloaded.Code.Should().Be(CoapCode.Content);
            byte[] large = downloaded.Payload.ToArray();
            large.Should().HaveCount(300_000);
            Enumerable.Range(0, large.Length).Where(i => large[i] != (byte)(i % 251)).Should().BeEmpty("the sample's /large has byte i mod 251 at offset i");
        }
    }

    [SkippableTheory, MemberData(nameof(Schemes))]
    public async Task ObserversGetTheNotificationsOfTheirInstanceThroughNginx(string scheme)
    {
        await using ClientsOnInstances clients = await ClientsOnInstances.FindAsync(await _fixture.GetAsync(), scheme);
        ScaleOutDeployment deployment = clients.Deployment;
        Dictionary<SampleServerProcess, long> before = [];
        foreach (SampleServerProcess instance in deployment.Instances)
        {
            before[instance] = await clients.CounterAsync(instance);
        }

        const int Posts = 3;
        foreach ((CoapClient client, SampleServerProcess instance) in clients.Placed)
        {
            List<CoapResponse> notifications = [];
            using CoapObservation observation = client.Observe(deployment.Nginx.Uri(scheme, "/counter"), n =>
            {
                lock (notifications)
                {
                    notifications.Add(n);
                }
            });
            observation.IsActive.Should().BeTrue("the instance accepts the registration that came through nginx");

            for (int i = 0; i < Posts; i++)
            {
                // RFC 7641 section 4.2: the POST changes the counter of the instance it reaches, which notifies the
                // observers it holds; the notification reaches this client only through the same nginx session.
                CoapResponse posted = await client.PostAsync(deployment.Nginx.Uri(scheme, "/counter"), ReadOnlyMemory<byte>.Empty);
                posted.Code.Should().Be(CoapCode.Changed);
                string count = posted.GetPayloadString();
                await Wait.UntilAsync(
                    () => { lock (notifications) { return notifications.Exists(n => n.GetPayloadString() == count); } },
                    $"the notification of count {count} from {instance.EndPoint} through nginx",
                    Liveness);
            }

            lock (notifications)
            {
                notifications.Select(n => n.Observe).Should().OnlyContain(o => o != null);
                notifications.Select(n => n.Observe!.Value).Should().BeInAscendingOrder().And.OnlyHaveUniqueItems();
            }
        }

        // Every POST reached the instance its client was placed on, and none the other.
        foreach (SampleServerProcess instance in deployment.Instances)
        {
            int placedHere = clients.Placed.Count(p => p.Instance == instance);
            (await clients.CounterAsync(instance)).Should().Be(before[instance] + (Posts * placedHere), $"{placedHere} client(s) of nginx were placed on {instance.EndPoint}");
        }
    }

    [SkippableFact]
    public async Task AnNginxThatEndsTheUdpSessionAfterEachResponseBreaksABlockwiseUpload()
    {
        // What docs/DEPLOYMENT.md warns of: proxy_responses 1 ends nginx's UDP session after each answer, so every
        // block of an upload arrives from a new source port, a new peer to the instance, which has no upload in progress
        // for it past the first block (RFC 7959 section 2.9.2: 4.08 Request Entity Incomplete).
        ScaleOutDeployment deployment = await _fixture.GetAsync();
        await using NginxStreamProxy misconfigured = await NginxStreamProxy.StartAsync(deployment.UdpEndPoints, deployment.TcpEndPoints, proxyResponses: 1);
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });
        using CancellationTokenSource timeout = new(Liveness);

        (await client.GetAsync(misconfigured.Uri("coap", "/hello"), timeout.Token)).GetPayloadString().Should().Be("Hello, CoAP!", "one request, one answer: that much still works");
        CoapResponse uploaded = await client.UploadAsync(misconfigured.Uri("coap", "/upload"), new MemoryStream(new byte[20_000]), cancellationToken: timeout.Token);

        uploaded.Code.Should().Be(CoapCode.RequestEntityIncomplete, uploaded.GetPayloadString());
    }

    [Fact]
    public void TheDeploymentPageShowsTheStreamBlockTheTestsRun()
    {
        string page = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "DeploymentCheck", "DEPLOYMENT.md"));
        IPEndPoint[] instances = [IPEndPoint.Parse("10.0.0.11:5683"), IPEndPoint.Parse("10.0.0.12:5683")];

        string block = NginxStreamProxy.StreamBlock(IPEndPoint.Parse("0.0.0.0:5683"), instances, instances);

        page.Should().Contain(block, "docs/DEPLOYMENT.md shows the stream block of NginxStreamProxy, rendered for two instances on 10.0.0.11 and 10.0.0.12");
    }

    /// <summary>Clients of nginx, each with the instance nginx placed it on (found past the balancer), and a client that asks the instances directly.</summary>
    private sealed class ClientsOnInstances : IAsyncDisposable
    {
        private readonly CoapClient _direct = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });
        private readonly List<CoapClient> _clients = [];

        private ClientsOnInstances(ScaleOutDeployment deployment) => Deployment = deployment;

        public ScaleOutDeployment Deployment { get; }

        public List<(CoapClient Client, SampleServerProcess Instance)> Placed { get; } = [];

        /// <summary>
        /// Over UDP, a client on each instance: clients bound to 127.0.0.2, .3, ... until nginx's hash of the address
        /// has put one on each. Over TCP one client, from 127.0.0.1 (the client cannot choose its TCP source address).
        /// </summary>
        public static async Task<ClientsOnInstances> FindAsync(ScaleOutDeployment deployment, string scheme)
        {
            ClientsOnInstances clients = new(deployment);
            try
            {
                for (int host = 2; host < 255 && clients.Placed.Count < (scheme == "coap" ? deployment.Instances.Count : 1); host++)
                {
                    CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(new IPAddress([127, 0, 0, (byte)host]), 0) });
                    clients._clients.Add(client);
                    SampleServerProcess instance = await clients.PlacementAsync(deployment, client, scheme);
                    if (!clients.Placed.Exists(p => p.Instance == instance))
                    {
                        clients.Placed.Add((client, instance));
                    }
                }

                clients.Placed.Should().HaveCount(scheme == "coap" ? deployment.Instances.Count : 1, "nginx spreads client addresses over the instances");
                return clients;
            }
            catch
            {
                await clients.DisposeAsync();
                throw;
            }
        }

        /// <summary>The instance's /counter, asked directly.</summary>
        public async Task<long> CounterAsync(SampleServerProcess instance)
            => long.Parse((await _direct.GetAsync(ScaleOutDeployment.Direct(instance, "/counter"))).GetPayloadString(), System.Globalization.CultureInfo.InvariantCulture);

        public async ValueTask DisposeAsync()
        {
            foreach (CoapClient client in _clients)
            {
                await client.DisposeAsync();
            }

            await _direct.DisposeAsync();
        }

        // A store entry made through nginx is in the store of exactly one instance: the one nginx placed the client on.
        private async Task<SampleServerProcess> PlacementAsync(ScaleOutDeployment deployment, CoapClient client, string scheme)
        {
            string entry = "/store/placement-" + Guid.NewGuid().ToString("N");
            (await client.PutAsync(deployment.Nginx.Uri(scheme, entry), "here"u8.ToArray())).Code.Should().Be(CoapCode.Created);
            List<SampleServerProcess> holders = [];
            foreach (SampleServerProcess instance in deployment.Instances)
            {
                if ((await _direct.GetAsync(ScaleOutDeployment.Direct(instance, entry))).Code == CoapCode.Content)
                {
                    holders.Add(instance);
                }
            }

            holders.Should().ContainSingle("the instances share nothing, so the entry is where nginx sent the PUT");
            return holders[0];
        }
    }
}
