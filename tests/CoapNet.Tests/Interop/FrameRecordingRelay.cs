using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Interop;

/// <summary>
/// A TCP relay on 127.0.0.1 between one client and a server: it forwards every byte both ways unchanged and parses
/// the client's bytes as RFC 8323 frames, so a test sees exactly what a client put on the wire to a real peer.
/// </summary>
internal sealed class FrameRecordingRelay : IAsyncDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly IPEndPoint _server;
    private readonly List<CoapMessage> _fromClient = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _run;

    public FrameRecordingRelay(IPEndPoint server)
    {
        _server = server;
        _listener.Start();
        _run = RunAsync();
    }

    /// <summary>The relay's endpoint, for the client's URI.</summary>
    public IPEndPoint EndPoint => (IPEndPoint)_listener.LocalEndpoint;

    /// <summary>The frames the client sent so far, in order; each with its options and the length of its payload.</summary>
    public IReadOnlyList<CoapMessage> FromClient
    {
        get
        {
            lock (_fromClient)
            {
                return [.. _fromClient];
            }
        }
    }

    /// <summary>
    /// The client's frames that <paramref name="match"/>, once at least <paramref name="count"/> of them are parsed, or
    /// those parsed by the end of <paramref name="timeout"/>. The relay forwards bytes before it parses them, so the peer's
    /// answer can reach the client before the relay has recorded the request it answers.
    /// </summary>
    public async Task<List<CoapMessage>> ClientFramesAsync(Func<CoapMessage, bool> match, int count, TimeSpan timeout)
    {
        long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        while (true)
        {
            List<CoapMessage> matched = [.. FromClient.Where(match)];
            if (matched.Count >= count || Environment.TickCount64 >= deadline)
            {
                return matched;
            }

            await Task.Delay(10);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        try
        {
            await _run;
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or IOException or ObjectDisposedException)
        {
            // The relay ends with the test.
        }

        _stop.Dispose();
    }

    private async Task RunAsync()
    {
        using TcpClient client = await _listener.AcceptTcpClientAsync(_stop.Token);
        using TcpClient server = new();
        await server.ConnectAsync(_server, _stop.Token);
        Pipe recorded = new();
        Task toServer = CopyAsync(client.GetStream(), server.GetStream(), recorded.Writer);
        Task toClient = CopyAsync(server.GetStream(), client.GetStream(), null);
        Task parse = ParseAsync(recorded.Reader);
        await Task.WhenAny(toServer, toClient);
        await recorded.Writer.CompleteAsync();
        await parse;
    }

    private async Task CopyAsync(Stream from, Stream to, PipeWriter? copy)
    {
        byte[] buffer = new byte[64 * 1024];
        int read;
        while ((read = await from.ReadAsync(buffer, _stop.Token)) > 0)
        {
            await to.WriteAsync(buffer.AsMemory(0, read), _stop.Token);
            if (copy is not null)
            {
                await copy.WriteAsync(buffer.AsMemory(0, read), _stop.Token);
            }
        }
    }

    private async Task ParseAsync(PipeReader reader)
    {
        CoapMessageSerializer frames = new(CoapFraming.Stream, new CoapSerializerOptions { MaxMessageSize = 64 * 1024 * 1024 });
        while (await frames.DeserializeAsync(reader, _stop.Token) is CoapMessage message)
        {
            lock (_fromClient)
            {
                _fromClient.Add(message);
            }
        }
    }
}
