using System.Net;
using System.Net.Http.Headers;
using CoapNet.AspNetCore;
using CoapNet.Hosting;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace CoapNet.Tests.Explorer;

/// <summary>
/// MapCoapExplorer over HTTP on real Kestrel (127.0.0.1, a free port): the page and its files come from the package
/// itself, with a policy that lets them load nothing from elsewhere, revalidated by ETag.
/// </summary>
public sealed class ExplorerPageTests : IAsyncLifetime
{
    private WebApplication? _app;
    private HttpClient? _http;

    public async Task InitializeAsync()
    {
        WebApplicationBuilder builder = WebApplication.CreateBuilder(new WebApplicationOptions { EnvironmentName = "Test" });
        builder.Logging.ClearProviders();
        builder.Configuration.Sources.Clear();
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, 0));
        builder.Services.AddCoapServer(options => options.Listen("coap://127.0.0.1:0"));
        builder.Services.AddCoapWebSockets();
        _app = builder.Build();
        _app.MapCoapWebSockets();
        _app.MapCoapExplorer("/explorer");
        await _app.StartAsync();
        string address = _app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
        _http = new HttpClient(new HttpClientHandler { AllowAutoRedirect = false }) { BaseAddress = new Uri(address) };
    }

    public async Task DisposeAsync()
    {
        _http?.Dispose();
        if (_app is not null)
        {
            await _app.DisposeAsync();
        }
    }

    [Fact]
    public async Task ThePageLoadsItsScriptAndStyleFromBesideItselfAndNothingFromElsewhere()
    {
        using HttpResponseMessage page = await _http!.GetAsync("/explorer/");

        page.StatusCode.Should().Be(HttpStatusCode.OK);
        page.Content.Headers.ContentType!.MediaType.Should().Be("text/html");
        string html = await page.Content.ReadAsStringAsync();
        html.Should().Contain("<script type=\"module\" src=\"coap-explorer/explorer.js\"></script>")
            .And.Contain("href=\"coap-explorer/explorer.css\"")
            .And.NotContain("https://", "the page needs no CDN");
        string policy = string.Join(' ', page.Headers.GetValues("Content-Security-Policy"));
        policy.Should().Contain("default-src 'none'").And.Contain("script-src 'self'").And.Contain("connect-src 'self' ws: wss:");

        foreach ((string file, string type, string content) in (ValueTuple<string, string, string>[])[
            ("explorer.js", "text/javascript", "from './coap.js'"),
            ("coap.js", "text/javascript", "RFC 8323 section 4.2"),
            ("cbor.js", "text/javascript", "RFC 8949"),
            ("explorer.css", "text/css", "@media")])
        {
            using HttpResponseMessage response = await _http.GetAsync("/explorer/coap-explorer/" + file);
            response.StatusCode.Should().Be(HttpStatusCode.OK, file);
            response.Content.Headers.ContentType!.MediaType.Should().Be(type, file);
            (await response.Content.ReadAsStringAsync()).Should().Contain(content, file);
        }
    }

    [Fact]
    public async Task ThePathWithoutItsSlashRedirectsToIt()
    {
        using HttpResponseMessage response = await _http!.GetAsync("/explorer?endpoint=x");

        response.StatusCode.Should().Be(HttpStatusCode.Redirect);
        response.Headers.Location!.OriginalString.Should().Be("/explorer/?endpoint=x", "the page's relative links resolve under the slash");
    }

    [Theory]
    [InlineData("/explorer/coap-explorer/missing.js")]
    [InlineData("/explorer/coap-explorer/index.html")]
    [InlineData("/coap-explorer/coap.js")]
    public async Task OtherNamesAreNotFound(string path)
    {
        using HttpResponseMessage response = await _http!.GetAsync(path);

        response.StatusCode.Should().Be(HttpStatusCode.NotFound);
    }

    [Fact]
    public async Task AFileIsRevalidatedByItsETag()
    {
        using HttpResponseMessage first = await _http!.GetAsync("/explorer/coap-explorer/coap.js");
        EntityTagHeaderValue etag = first.Headers.ETag!;
        first.Headers.CacheControl!.NoCache.Should().BeTrue("a newer package serves new files at the same names");

        using HttpRequestMessage again = new(HttpMethod.Get, "/explorer/coap-explorer/coap.js");
        again.Headers.IfNoneMatch.Add(etag);
        using HttpResponseMessage revalidated = await _http.SendAsync(again);

        revalidated.StatusCode.Should().Be(HttpStatusCode.NotModified);
    }

    [Fact]
    public void APathThatDoesNotStartWithASlashIsRefusedByName()
    {
        Action map = () => _app!.MapCoapExplorer("explorer");

        map.Should().Throw<ArgumentException>().WithParameterName("path").WithMessage("*must start with '/'*");
    }
}
