using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;
using PuppeteerSharp;

namespace CoapNet.Tests.Explorer;

/// <summary>
/// Debian's headless Chromium, driven over the DevTools protocol by PuppeteerSharp (no browser download: the system's
/// executable), and the sample server program as a child process with coap+ws and the explorer on an HTTP port chosen
/// free at run time; one of each for the test class. Without Chromium a test skips with how to install it, and under
/// CI=true (where .ci/run installs it) fails.
/// </summary>
public sealed class ExplorerBrowser : IAsyncLifetime
{
    /// <summary>How to install what the tests need.</summary>
    public const string InstallHint = "The explorer's browser tests need Chromium: sudo apt-get install -y chromium";

    // Debian's, then Google's (as on GitHub's runners), then Ubuntu's name for it.
    private static readonly string[] Executables = ["chromium", "google-chrome", "chromium-browser"];

    private SampleServerProcess? _server;
    private IBrowser? _browser;

    /// <summary>The sample server's explorer page, as it printed it.</summary>
    public Uri Page => Server.Explorer;

    /// <summary>The sample server.</summary>
    internal SampleServerProcess Server => _server ?? throw new InvalidOperationException("Call RequireAsync first.");

    /// <summary>Where each state's screenshot is saved: TestResults/explorer under the test output.</summary>
    public static string Screenshots { get; } = Path.Combine(AppContext.BaseDirectory, "TestResults", "explorer");

    /// <summary>Nothing starts before a test asks: a machine without Chromium then skips rather than fails the fixture.</summary>
    public Task InitializeAsync() => Task.CompletedTask;

    /// <summary>Starts the browser and the sample server, once for the class; skips (fails under CI=true) without Chromium.</summary>
    public async Task RequireAsync()
    {
        string? executable = null;
        foreach (string name in Executables)
        {
            executable ??= LibCoap.Find(name);
        }

        if (executable is null)
        {
            LibCoap.Missing(InstallHint);
            return;
        }

        _server ??= await SampleServerProcess.StartWithHttpAsync();
        _browser ??= await Puppeteer.LaunchAsync(new LaunchOptions
        {
            Headless = true,
            ExecutablePath = executable,
            // Root (CI) cannot use Chromium's sandbox; /dev/shm is small in containers.
            Args = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
        });
    }

    /// <summary>A new tab of <paramref name="width"/> x <paramref name="height"/> CSS pixels on <paramref name="address"/> (the explorer by default), once its script has run.</summary>
    public async Task<IPage> OpenAsync(int width = 1280, int height = 900, Uri? address = null, bool mobile = false)
    {
        IPage page = await _browser!.NewPageAsync();
        await page.SetViewportAsync(new ViewPortOptions { Width = width, Height = height, IsMobile = mobile, HasTouch = mobile, DeviceScaleFactor = 1 });
        await page.GoToAsync((address ?? Page).ToString(), WaitUntilNavigation.Load);
        return page;
    }

    /// <summary>Saves the page as TestResults/explorer/<paramref name="name"/>.png.</summary>
    public static async Task ScreenshotAsync(IPage page, string name)
    {
        Directory.CreateDirectory(Screenshots);
        await page.ScreenshotAsync(Path.Combine(Screenshots, name + ".png"), new ScreenshotOptions { FullPage = true });
    }

    public async Task DisposeAsync()
    {
        if (_browser is not null)
        {
            await _browser.CloseAsync();
            _browser.Dispose();
        }

        _server?.Dispose();
    }
}
