using System.Net;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Interop.ScaleOut;

/// <summary>
/// Two sample server processes (one build: the program copied next to the tests) behind nginx's stream proxy, on
/// loopback, as docs/DEPLOYMENT.md describes. Each instance has its own state; nothing is shared between them.
/// </summary>
internal sealed class ScaleOutDeployment : IAsyncDisposable
{
    private ScaleOutDeployment(IReadOnlyList<SampleServerProcess> instances, NginxStreamProxy nginx)
    {
        Instances = instances;
        Nginx = nginx;
    }

    /// <summary>The server instances.</summary>
    public IReadOnlyList<SampleServerProcess> Instances { get; }

    /// <summary>The balancer in front of them.</summary>
    public NginxStreamProxy Nginx { get; }

    /// <summary>The instances' UDP endpoints.</summary>
    public IPEndPoint[] UdpEndPoints => [.. Instances.Select(i => i.EndPoint)];

    /// <summary>The instances' TCP endpoints.</summary>
    public IPEndPoint[] TcpEndPoints => [.. Instances.Select(i => i.TcpEndPoint)];

    /// <summary>Starts two instances, then nginx in front of them.</summary>
    public static async Task<ScaleOutDeployment> StartAsync()
    {
        // Locate nginx first: without it the test skips before starting anything.
        _ = ScaleOut.Nginx.Executable;
        Task<SampleServerProcess>[] starting = [SampleServerProcess.StartWithTcpAsync(), SampleServerProcess.StartWithTcpAsync()];
        try
        {
            SampleServerProcess[] instances = await Task.WhenAll(starting);
            NginxStreamProxy nginx = await NginxStreamProxy.StartAsync([.. instances.Select(i => i.EndPoint)], [.. instances.Select(i => i.TcpEndPoint)]);
            return new ScaleOutDeployment(instances, nginx);
        }
        catch
        {
            foreach (Task<SampleServerProcess> instance in starting)
            {
                if (instance.IsCompletedSuccessfully)
                {
                    instance.Result.Dispose();
                }
            }

            throw;
        }
    }

    /// <summary>A URI on one instance directly, past the balancer.</summary>
    public static Uri Direct(SampleServerProcess instance, string pathAndQuery) => new($"coap://{instance.EndPoint}{pathAndQuery}");

    /// <inheritdoc/>
    public async ValueTask DisposeAsync()
    {
        await Nginx.DisposeAsync();
        foreach (SampleServerProcess instance in Instances)
        {
            instance.Dispose();
        }
    }
}

/// <summary>The deployment the scale-out tests share, started by the first test that needs it.</summary>
public sealed class ScaleOutFixture : IAsyncLifetime
{
    private readonly SemaphoreSlim _gate = new(1, 1);
    private ScaleOutDeployment? _deployment;

    /// <summary>Nothing is started until a test asks: a machine without nginx skips before that.</summary>
    public Task InitializeAsync() => Task.CompletedTask;

    /// <summary>Stops nginx and the instances.</summary>
    public async Task DisposeAsync()
    {
        if (_deployment is not null)
        {
            await _deployment.DisposeAsync();
        }

        _gate.Dispose();
    }

    internal async Task<ScaleOutDeployment> GetAsync()
    {
        await _gate.WaitAsync();
        try
        {
            return _deployment ??= await ScaleOutDeployment.StartAsync();
        }
        finally
        {
            _gate.Release();
        }
    }
}
