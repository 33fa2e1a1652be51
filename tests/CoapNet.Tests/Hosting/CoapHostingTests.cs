using System.Collections.Concurrent;
using System.Net;
using CoapNet.Client;
using CoapNet.Hosting;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace CoapNet.Tests.Hosting;

/// <summary>
/// CoapNet in the Generic Host: the server starts and stops with the host, resources come from
/// dependency injection with a scope per request, and AddCoapClient gives a configured client.
/// </summary>
public sealed class CoapHostingTests
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task EachRequestGetsItsOwnScopeDisposedWhenItIsAnswered()
    {
        using IHost host = BuildHost(services => services.AddCoapServer().MapResource<ScopeResource>("/scope"));
        await host.StartAsync();
        CoapServer server = host.Services.GetRequiredService<CoapServer>();
        ScopeLog log = host.Services.GetRequiredService<ScopeLog>();
        await using CoapClient client = LoopbackClient();

        string first = (await client.GetAsync(UriOf(server, "coap", "/scope"))).GetPayloadString();
        string second = (await client.GetAsync(UriOf(server, "coap+tcp", "/scope"))).GetPayloadString();

        first.Should().EndWith(" shared").And.NotBe(second, "two requests, two scopes, two instances of the scoped service");
        second.Should().EndWith(" shared", "within one scope the resource and its helper share the scoped service");
        log.Disposed.Should().Contain([first.Split(' ')[0], second.Split(' ')[0]], "each request's scope is disposed before its answer goes out");
        await host.StopAsync();
    }

    [Fact]
    public async Task AnAsyncResourceRunsInItsScopeAndItsMethodsAreTheOnesMapped()
    {
        using IHost host = BuildHost(services => services.AddCoapServer().MapResource<AsyncScopeResource>("/async/{name}"));
        await host.StartAsync();
        CoapServer server = host.Services.GetRequiredService<CoapServer>();
        await using CoapClient client = LoopbackClient();

        CoapResponse put = await client.PutAsync(UriOf(server, "coap", "/async/lamp"), "on"u8.ToArray(), CoapContentFormat.TextPlain);
        CoapResponse get = await client.GetAsync(UriOf(server, "coap", "/async/lamp"));
        CoapResponse unsupported = await client.PutAsync(UriOf(server, "coap", "/async/lamp"), "{}"u8.ToArray(), CoapContentFormat.Json);
        IReadOnlyList<LinkFormat.CoapLink> links = await client.DiscoverAsync(UriOf(server, "coap", "/"));

        put.Code.Should().Be(CoapCode.Changed);
        put.GetPayloadString().Should().StartWith("lamp=on in scope ");
        get.Code.Should().Be(CoapCode.MethodNotAllowed, "the resource overrides PutAsync only");
        unsupported.Code.Should().Be(CoapCode.UnsupportedContentFormat, "its AcceptedContentFormats are applied to the route");
        links.Should().BeEmpty("a route with a parameter is not listed");
    }

    [Fact]
    public async Task TheHostStartsTheServerFromConfigurationAndOnStopAnswersTheRequestInFlight()
    {
        TaskCompletionSource entered = new(TaskCreationOptions.RunContinuationsAsynchronously);
        TaskCompletionSource release = new(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = BuildHost(services => services.AddCoapServer().Map((server, provider) => server.MapGet("/slow", async (request, cancellationToken) =>
        {
            entered.TrySetResult();
            await release.Task;
            return CoapResponse.Content("finished");
        })));
        CoapServer server = host.Services.GetRequiredService<CoapServer>();
        server.IsRunning.Should().BeFalse("the server starts with the host, not before");

        await host.StartAsync();
        server.LocalUris.Select(u => u.Scheme).Should().BeEquivalentTo(["coap", "coap+tcp"], "both endpoints of the configuration are bound");
        await using CoapClient client = LoopbackClient();
        Task<CoapResponse> inFlight = client.GetAsync(UriOf(server, "coap+tcp", "/slow"));
        await entered.Task.WaitAsync(Liveness);

        Task stopping = host.StopAsync();
        Wait.Until(() => !server.IsRunning, "stopping the host to stop the server", Liveness);
        release.SetResult();

        (await inFlight.WaitAsync(Liveness)).GetPayloadString().Should().Be("finished");
        await stopping.WaitAsync(Liveness);
    }

    [Fact]
    public async Task AddCoapClientRegistersAClientConfiguredFromTheClientSection()
    {
        ConcurrentQueue<CoapMessageType> types = new();
        using IHost host = BuildHost(services =>
        {
            services.AddCoapServer().Map((server, provider) => server.MapGet("/type", request =>
            {
                types.Enqueue(request.Message.Type);
                return CoapResponse.Content("ok");
            }));
            services.AddCoapClient();
        });
        await host.StartAsync();
        CoapServer server = host.Services.GetRequiredService<CoapServer>();
        CoapClient client = host.Services.GetRequiredService<CoapClient>();

        CoapResponse response = await client.GetAsync(UriOf(server, "coap", "/type"));

        response.GetPayloadString().Should().Be("ok");
        types.Should().Equal(CoapMessageType.NonConfirmable);
        host.Services.GetRequiredService<CoapClient>().Should().BeSameAs(client);
        client.LocalEndPoint.Address.Should().Be(IPAddress.Loopback);
        await host.StopAsync();
    }

    [Fact]
    public async Task AddingTheServerTwiceMapsBothSetsOfRoutesOnOneServerWithTheConfiguredEndpointsOnce()
    {
        using IHost host = BuildHost(services =>
        {
            services.AddCoapServer().Map((server, provider) => server.MapGet("/one", request => CoapResponse.Content("1")));
            services.AddCoapServer(options => options.MaxPendingRequests = 7).Map((server, provider) => server.MapGet("/two", request => CoapResponse.Content("2")));
        });
        await host.StartAsync();
        CoapServer server = host.Services.GetRequiredService<CoapServer>();
        await using CoapClient client = LoopbackClient();

        (await client.GetAsync(UriOf(server, "coap", "/one"))).GetPayloadString().Should().Be("1");
        (await client.GetAsync(UriOf(server, "coap", "/two"))).GetPayloadString().Should().Be("2");
        server.LocalUris.Should().HaveCount(2, "the configuration's two endpoints, bound once");
        host.Services.GetServices<IHostedService>().Should().ContainSingle(s => s.GetType().Name == "CoapServerHostedService");
        host.Services.GetRequiredService<Microsoft.Extensions.Options.IOptions<CoapServerOptions>>().Value.MaxPendingRequests.Should().Be(7);
        await host.StopAsync();
    }

    // A host like an application's, its configuration in memory: both transports on loopback at free ports.
    private static IHost BuildHost(Action<IServiceCollection> configure)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Coap:Endpoints:udp:Url"] = "coap://127.0.0.1:0",
            ["Coap:Endpoints:tcp:Url"] = "coap+tcp://127.0.0.1:0",
            ["Coap:Client:LocalEndPoint"] = "127.0.0.1:0",
            ["Coap:Client:UseNonConfirmable"] = "true",
        });
        builder.Services.AddSingleton<ScopeLog>();
        builder.Services.AddScoped<ScopedThing>();
        builder.Services.AddScoped<ScopeHelper>();
        configure(builder.Services);
        return builder.Build();
    }

    private static CoapClient LoopbackClient() => new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });

    private static Uri UriOf(CoapServer server, string scheme, string path)
        => new(server.LocalUris.Single(u => u.Scheme == scheme), path);

    /// <summary>A singleton that outlives the scopes: which scoped instances were disposed.</summary>
    public sealed class ScopeLog
    {
        public ConcurrentQueue<string> Disposed { get; } = new();
    }

    /// <summary>A scoped service with an identity, which says when its scope ends.</summary>
    public sealed class ScopedThing(ScopeLog log) : IDisposable
    {
        public string Id { get; } = Guid.NewGuid().ToString("N");

        public void Dispose() => log.Disposed.Enqueue(Id);
    }

    /// <summary>Another scoped service that depends on <see cref="ScopedThing"/>.</summary>
    public sealed class ScopeHelper(ScopedThing thing)
    {
        public ScopedThing Thing => thing;
    }

    /// <summary>A synchronous resource: answers its scoped service's id, and whether its helper got the same instance.</summary>
    public sealed class ScopeResource(ScopedThing thing, ScopeHelper helper) : CoapResource
    {
        public override CoapResponse Get(CoapRequest request)
            => CoapResponse.Content(thing.Id + (ReferenceEquals(thing, helper.Thing) ? " shared" : " separate"));
    }

    /// <summary>An asynchronous resource with a route parameter and an accepted Content-Format.</summary>
    public sealed class AsyncScopeResource(ScopedThing thing) : CoapResource
    {
        public override IReadOnlyList<ushort> AcceptedContentFormats => [CoapContentFormat.TextPlain];

        public override async ValueTask<CoapResponse> PutAsync(CoapRequest request, CancellationToken cancellationToken)
        {
            await Task.Yield();
            return new CoapResponse(CoapCode.Changed, $"{request.GetRouteValue("name")}={request.GetPayloadString()} in scope {thing.Id}");
        }
    }
}
