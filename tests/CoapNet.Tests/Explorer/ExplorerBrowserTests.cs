using System.Security.Cryptography;
using System.Text;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;
using PuppeteerSharp;

namespace CoapNet.Tests.Explorer;

/// <summary>
/// The explorer page in a real browser (headless Chromium) against the sample server program: it speaks CoAP over
/// WebSockets to the server that serves it, and what it shows is what a user sees. Each state is saved as a screenshot
/// under TestResults/explorer. Waits are liveness bounds (<see cref="Wait"/>), never durations asserted.
/// </summary>
public sealed class ExplorerBrowserTests(ExplorerBrowser browser) : IClassFixture<ExplorerBrowser>
{
    [SkippableFact]
    public async Task ThePageListsTheSampleResourcesWithTheirAttributesAndGetOfHelloShowsItsPayload()
    {
        await browser.RequireAsync();
        await using IPage page = await browser.OpenAsync();
        await ResourcesListedAsync(page);

        string[] listed = await page.EvaluateExpressionAsync<string[]>("[...document.querySelectorAll('#resources button.resource')].map(b => b.dataset.path)");
        listed.Should().Contain(["/hello", "/time", "/sensors/temperature", "/counter", "/echo", "/store", "/slow", "/large", "/upload"]);
        string attributes = await page.EvaluateExpressionAsync<string>("document.getElementById('resources').innerText");
        attributes.Should().Contain("title=Greeting").And.Contain("rt=temperature-c").And.Contain("obs", "each link's attributes are shown");
        await ExplorerBrowser.ScreenshotAsync(page, "1-resources");

        await page.ClickAsync("#resources button[data-path='/hello']");
        await PayloadAsync(page, "Hello, CoAP!");
        (await TextAsync(page, "response-code")).Should().StartWith("2.05 Content");
        string log = await TextAsync(page, "log");
        log.Should().Contain("0.01 GET").And.Contain("Uri-Path: hello").And.Contain("2.05 Content").And.Contain("7.01 CSM", "the message log shows every message, the CSM first");
        await ExplorerBrowser.ScreenshotAsync(page, "2-get-hello");
    }

    [SkippableFact]
    public async Task ObservingTheTemperaturePutsItsNotificationsOnTheChart()
    {
        await browser.RequireAsync();
        await using IPage page = await browser.OpenAsync();
        await ResourcesListedAsync(page);

        await SetAsync(page, "path", "/sensors/temperature");
        await page.ClickAsync("#observe");
        await Wait.UntilAsync(
            async () => await page.EvaluateExpressionAsync<int>("document.querySelectorAll('#chart circle').length") >= 3,
            "three notifications of /sensors/temperature as points on the chart");
        (await page.EvaluateExpressionAsync<int>("document.querySelectorAll('#notifications li').length")).Should().BeGreaterThanOrEqualTo(3);
        await ExplorerBrowser.ScreenshotAsync(page, "3-observe-temperature");

        await page.ClickAsync("#cancel-observe");
        (await TextAsync(page, "observe-status")).Should().Be("Stopped observing.");
        await Wait.UntilAsync(
            async () => (await TextAsync(page, "log")).Contains("Observe: 1", StringComparison.Ordinal),
            "the deregistration (GET with Observe 1, RFC 7641 section 3.6) in the log");
    }

    [SkippableFact]
    public async Task PutThenGetOfStoreXRoundTrips()
    {
        await browser.RequireAsync();
        await using IPage page = await browser.OpenAsync();
        await ResourcesListedAsync(page);
        string value = "explorer " + Guid.NewGuid().ToString("N");

        await page.SelectAsync("#method", "PUT");
        await SetAsync(page, "path", "/store/x");
        await SetAsync(page, "payload", value);
        await page.SelectAsync("#content-format", "0");
        await page.ClickAsync("#send");
        await Wait.UntilAsync(
            async () => await TextAsync(page, "response-code") is string code && (code.StartsWith("2.01 Created", StringComparison.Ordinal) || code.StartsWith("2.04 Changed", StringComparison.Ordinal)),
            "2.01 Created or 2.04 Changed");

        await page.SelectAsync("#method", "GET");
        await page.ClickAsync("#send");
        await PayloadAsync(page, value);
        (await TextAsync(page, "response-options")).Should().Contain("ETag").And.Contain("Content-Format: 0 (text/plain;charset=utf-8)");
        await ExplorerBrowser.ScreenshotAsync(page, "4-put-get-store");
    }

    [SkippableFact]
    public async Task AOneMegabyteBlockwiseDownloadCompletesWithTheBarAtAHundredPercent()
    {
        await browser.RequireAsync();
        await using IPage page = await browser.OpenAsync();
        await ResourcesListedAsync(page);

        await SetAsync(page, "path", "/large?size=1048576");
        await page.ClickAsync("#send");
        await Wait.UntilAsync(
            async () => (await TextAsync(page, "response-code")).StartsWith("2.05 Content (1,048,576 bytes)", StringComparison.Ordinal),
            "the whole body of /large?size=1048576, block by block",
            TimeSpan.FromMinutes(2));
        (await page.EvaluateExpressionAsync<double>("document.getElementById('progress').value")).Should().Be(1048576);
        (await page.EvaluateExpressionAsync<double>("document.getElementById('progress').max")).Should().Be(1048576);
        (await TextAsync(page, "progress-text")).Should().Be("1,048,576 of 1,048,576 bytes (100 %)");
        // The body is the server's deterministic one: byte i is i mod 251.
        (await TextAsync(page, "response-payload")).Should().StartWith("00000000  00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f");
        await ExplorerBrowser.ScreenshotAsync(page, "5-large-download");
    }

    [SkippableFact]
    public async Task ABlockwiseUploadReachesTheServerWhole()
    {
        await browser.RequireAsync();
        await using IPage page = await browser.OpenAsync();
        await ResourcesListedAsync(page);
        string body = string.Concat(Enumerable.Repeat("0123456789abcdef", 320));

        await page.SelectAsync("#method", "PUT");
        await SetAsync(page, "path", "/upload");
        await SetAsync(page, "payload", body);
        await page.SelectAsync("#block-size", "256");
        await page.ClickAsync("#send");

        await PayloadAsync(page, Convert.ToHexString(SHA256.HashData(Encoding.UTF8.GetBytes(body))).ToLowerInvariant());
        (await TextAsync(page, "progress-text")).Should().Be("5,120 of 5,120 bytes (100 %)");
        (await TextAsync(page, "log")).Should().Contain("Block1: 18/1/256").And.Contain("Block1: 19/0/256").And.Contain("2.31 Continue", "twenty Block1 blocks of 256 bytes (RFC 7959 section 2.5)");
    }

    [SkippableFact]
    public async Task AtAPhonesWidthNothingIsCutOff()
    {
        await browser.RequireAsync();
        await using IPage page = await browser.OpenAsync(width: 390, height: 844, mobile: true);
        await ResourcesListedAsync(page);
        await page.ClickAsync("#resources button[data-path='/hello']");
        await PayloadAsync(page, "Hello, CoAP!");

        (await page.EvaluateExpressionAsync<int>("document.documentElement.scrollWidth")).Should().BeLessThanOrEqualTo(390);
        (await page.EvaluateExpressionAsync<int>("document.body.scrollWidth")).Should().BeLessThanOrEqualTo(390);
        string[] outside = await page.EvaluateExpressionAsync<string[]>(
            "[...document.querySelectorAll('body *')].filter(e => e.closest('.table-scroll') === null && e.getClientRects().length && e.getBoundingClientRect().right > 390.5).map(e => e.id || e.tagName)");
        outside.Should().BeEmpty("every control and text is within the 390 px (the log's table scrolls in its own box)");
        await ExplorerBrowser.ScreenshotAsync(page, "6-phone-width");
    }

    [SkippableFact]
    public async Task TheKeyboardAloneReachesAResourceAndEnterSendsItsGet()
    {
        await browser.RequireAsync();
        await using IPage page = await browser.OpenAsync();
        await ResourcesListedAsync(page);

        for (int presses = 0; await page.EvaluateExpressionAsync<string>("document.activeElement?.dataset?.path ?? ''") != "/hello"; presses++)
        {
            presses.Should().BeLessThan(40, "Tab reaches the resource /hello in the tree");
            await page.Keyboard.PressAsync("Tab");
        }

        await page.Keyboard.PressAsync("Enter");
        await PayloadAsync(page, "Hello, CoAP!");
        await ExplorerBrowser.ScreenshotAsync(page, "7-keyboard");
    }

    [SkippableFact]
    public async Task ARefusedConnectionShowsAMessage()
    {
        await browser.RequireAsync();
        int closed = FreePorts.UdpAndTcp();
        await using IPage page = await browser.OpenAsync(address: new Uri(browser.Page, $"?endpoint=ws://127.0.0.1:{closed}/.well-known/coap"));

        await Wait.UntilAsync(async () => await page.EvaluateExpressionAsync<bool>("!document.getElementById('error').hidden"), "the error message");
        (await TextAsync(page, "error")).Should().Contain($"Cannot connect to ws://127.0.0.1:{closed}/.well-known/coap: connection refused");
        (await TextAsync(page, "status")).Should().Be("Not connected.");
        await ExplorerBrowser.ScreenshotAsync(page, "8-refused");
    }

    [SkippableFact]
    public async Task AnErrorResponseShowsItsCodeAndDiagnosticPayload()
    {
        await browser.RequireAsync();
        await using IPage page = await browser.OpenAsync();
        await ResourcesListedAsync(page);

        await SetAsync(page, "path", "/slow?ms=forever");
        await page.ClickAsync("#send");

        await Wait.UntilAsync(async () => await page.EvaluateExpressionAsync<bool>("!document.getElementById('error').hidden"), "the error message");
        (await TextAsync(page, "error")).Should().Be("GET /slow?ms=forever answered 4.00 Bad Request: ms must be a number from 0 to 60000.");
        await ExplorerBrowser.ScreenshotAsync(page, "9-error-response");
    }

    [SkippableFact]
    public async Task TheCborViewShowsDiagnosticNotation()
    {
        await browser.RequireAsync();
        await using IPage page = await browser.OpenAsync();
        await ResourcesListedAsync(page);

        // RFC 8949 Appendix A's examples, echoed by the server as application/cbor.
        await page.SelectAsync("#method", "POST");
        await SetAsync(page, "path", "/echo");
        await SetAsync(page, "payload", "0x a2 61 61 01 61 62 82 02 03");
        await page.SelectAsync("#content-format", "60");
        await page.ClickAsync("#send");

        await PayloadAsync(page, "{\"a\": 1, \"b\": [2, 3]}");
        await page.ClickAsync("button.view[data-view='hex']");
        (await TextAsync(page, "response-payload")).Should().Be("00000000  a2 61 61 01 61 62 82 02 03");
        foreach ((string hex, string diagnostic) in (ValueTuple<string, string>[])[
            ("00", "0"), ("3863", "-100"), ("f93e00", "1.5"), ("fb3ff199999999999a", "1.1"), ("f97c00", "Infinity"), ("f4", "false"),
            ("8301820203820405", "[1, [2, 3], [4, 5]]"), ("5f42010243030405ff", "(_ h'0102', h'030405')"),
            ("c074323031332d30332d32315432303a30343a30305a", "0(\"2013-03-21T20:04:00Z\")"), ("9f018202039f0405ffff", "[_ 1, [2, 3], [_ 4, 5]]")])
        {
            string shown = await page.EvaluateExpressionAsync<string>(
                $"import(new URL('coap-explorer/cbor.js', document.baseURI).href).then(m => m.cborToDiagnostic(Uint8Array.from('{hex}'.match(/../g), h => parseInt(h, 16))))");
            shown.Should().Be(diagnostic, $"0x{hex} is {diagnostic} (RFC 8949 Appendix A)");
        }
    }

    private static async Task ResourcesListedAsync(IPage page)
        => await Wait.UntilAsync(
            async () => await page.EvaluateExpressionAsync<bool>("document.querySelector(\"#resources button[data-path='/hello']\") !== null"),
            "the resource tree from /.well-known/core");

    private static async Task PayloadAsync(IPage page, string expected)
        => await Wait.UntilAsync(async () => await TextAsync(page, "response-payload") == expected, $"the payload \"{expected}\"");

    private static Task<string> TextAsync(IPage page, string id) => page.EvaluateFunctionAsync<string>("id => document.getElementById(id).textContent", id);

    private static Task SetAsync(IPage page, string id, string value)
        => page.EvaluateFunctionAsync("(id, value) => { document.getElementById(id).value = value; }", id, value);
}
