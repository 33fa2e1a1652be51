using System.Globalization;
using System.Net;
using System.Net.Sockets;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Scenarios;

/// <summary>
/// The child process of the slow-senders scenario: it opens the slow connections, so the server's
/// process holds only the server's side of them and its memory figures are the server's alone.
/// </summary>
/// <remarks>
/// Protocol on the standard streams: args <c>--port P --connections N --run-seconds S</c>; it prints
/// <c>open OK REFUSED</c> once every connection has exchanged CSMs, starts trickling when it reads the
/// line <c>trickle</c>, and closes everything and exits when its input ends or after S seconds.
/// </remarks>
internal static class SlowSenderPeer
{
    // The thesis's slow client (SEEDS-DIGEST 3.1): one byte every 250 ms, 4 bytes per second.
    private static readonly TimeSpan ByteInterval = TimeSpan.FromMilliseconds(250);

    public static async Task<int> RunAsync(string[] args)
    {
        int port = 0, count = 0, runSeconds = 600;
        for (int i = 0; i + 1 < args.Length; i += 2)
        {
            int value = int.Parse(args[i + 1], CultureInfo.InvariantCulture);
            switch (args[i])
            {
                case "--port":
                    port = value;
                    break;
                case "--connections":
                    count = value;
                    break;
                case "--run-seconds":
                    runSeconds = value;
                    break;
                default:
                    throw new ArgumentException($"slow-senders-peer: unknown option {args[i]}");
            }
        }

        // Whatever the parent does, this process ends: the slow senders are a bounded load.
        using CancellationTokenSource stop = new(TimeSpan.FromSeconds(runSeconds));
        byte[] csm = CoapMessageSerializer.Tcp.Serialize(new CoapMessage { Code = CoapCode.Csm });
        byte[] request = SlowRequest(port);
        IPEndPoint server = new(IPAddress.Loopback, port);
        List<Socket> sockets = new(count);
        int refused = 0, trickled = 0;
        try
        {
            for (int i = 0; i < count; i++)
            {
                Socket socket = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
                try
                {
                    await socket.ConnectAsync(server, stop.Token);

                    // RFC 8323 section 5.3: the CSM is each side's first message; reading the server's
                    // proves the connection was accepted and is running (not refused at MaxConnections).
                    await socket.SendAsync(csm, SocketFlags.None, stop.Token);
                    using NetworkStream stream = new(socket, ownsSocket: false);
                    CoapMessage? theirs = await CoapMessageSerializer.Tcp.DeserializeAsync(stream, stop.Token);
                    if (theirs?.Code != CoapCode.Csm)
                    {
                        throw new IOException("no CSM from the server");
                    }

                    sockets.Add(socket);
                }
                catch (Exception exception) when (exception is IOException or SocketException or CoapFormatException)
                {
                    refused++;
                    socket.Dispose();
                }
            }

            Console.WriteLine($"open {sockets.Count} {refused}");

            // Console.In's ReadLineAsync completes synchronously (it blocks until a line comes), so the
            // lines are read on a thread of their own; the trickle stops when the input ends.
            if (await Task.Run(Console.In.ReadLine).WaitAsync(stop.Token) == "trickle")
            {
                Task<string?> end = Task.Run(Console.In.ReadLine);
                trickled = await TrickleAsync(sockets, request, end, stop.Token);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // The run's time bound passed.
        }
        finally
        {
            foreach (Socket socket in sockets)
            {
                socket.Dispose();
            }
        }

        // The parent prints this, so a run shows that the slow senders really sent.
        Console.WriteLine($"trickled {trickled}");
        return 0;
    }

    /// <summary>Sends the next byte of <paramref name="request"/> on every socket each 250 ms until <paramref name="end"/> completes (input closed).</summary>
    /// <returns>How many bytes went to each socket.</returns>
    private static async Task<int> TrickleAsync(List<Socket> sockets, byte[] request, Task<string?> end, CancellationToken cancellationToken)
    {
        using PeriodicTimer timer = new(ByteInterval);
        int sent = 0;
        while (sent < request.Length && !end.IsCompleted && !cancellationToken.IsCancellationRequested)
        {
            foreach (Socket socket in sockets)
            {
                // One byte is far below any socket buffer: the send never blocks; a connection the server closed is skipped.
                try
                {
                    socket.Send(request.AsSpan(sent, 1), SocketFlags.None);
                }
                catch (SocketException)
                {
                }
            }

            sent++;
            if (!await timer.WaitForNextTickAsync(CancellationToken.None))
            {
                break;
            }
        }

        return sent;
    }

    /// <summary>
    /// A valid GET /hello whose frame is about 30 KB (Uri-Query padding), so at 4 bytes per second it
    /// stays incomplete for about two hours: the server holds a partial frame on every slow connection.
    /// </summary>
    private static byte[] SlowRequest(int port)
    {
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, new Uri($"coap+tcp://127.0.0.1:{port}/hello"));
        request.Token = new byte[] { 0x51, 0x0f, 0x5e, 0x4d };
        string pad = new('p', 250);
        for (int i = 0; i < 120; i++)
        {
            request.Options.Add(CoapOptionNumber.UriQuery, pad);
        }

        return CoapMessageSerializer.Tcp.Serialize(request);
    }
}
