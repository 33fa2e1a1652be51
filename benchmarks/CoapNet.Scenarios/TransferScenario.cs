using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Security.Cryptography;
using CoapNet.Blockwise;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Samples.Server;
using CoapNet.Server;

namespace CoapNet.Scenarios;

/// <summary>
/// Issue 9's transfer scenario: a 16 MiB block-wise download and upload (RFC 7959) between our client
/// and our server on loopback, over UDP and over TCP. The client streams both bodies (a hashing sink,
/// a generated source), so what the process holds is the server's: the stored body it serves blocks
/// from, and the upload it joins. Prints the time, the throughput, and the peak managed heap and RSS
/// during each transfer. Measures; asserts nothing.
/// </summary>
internal static class TransferScenario
{
    public const string Usage = """
        transfer [--size 16777216] [--rounds 2]
          --size    body bytes each way
          --rounds  transfers per transport and direction
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        int size = 16 * 1024 * 1024, rounds = 2;
        CommandLine.Parse(args, Usage, [], (name, value) =>
        {
            switch (name)
            {
                case "--size":
                    size = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--rounds":
                    rounds = CommandLine.ParseCount(name, value, 1);
                    return true;
                default:
                    return false;
            }
        });

        // The sample server's resources and limits: /large (generated, read block by block) and PUT /upload (SHA-256).
        BlockwiseOptions blockwise = SampleResources.Blockwise;
        await using CoapServer server = new(new CoapServerOptions
        {
            Endpoint = new CoapEndpointOptions { Blockwise = blockwise },
        }.Listen("coap+tcp", new IPEndPoint(IPAddress.Loopback, 0)).Listen("coap", new IPEndPoint(IPAddress.Loopback, 0)));
        using IDisposable ticker = SampleResources.Map(server);
        server.Start();
        string expected;
        using (DeterministicStream body = new(size))
        {
            expected = Convert.ToHexStringLower(SHA256.HashData(body));
        }

        await using CoapClient client = new(new CoapClientOptions { Endpoint = new Messaging.CoapEndpointOptions { Blockwise = blockwise } });
        string query = "?size=" + size.ToString(CultureInfo.InvariantCulture);

        Console.WriteLine($"transfer: {size:N0} bytes each way, {Environment.ProcessorCount} cores, {Environment.Version}, load {LoadAverage.Read():F2}");
        Console.WriteLine("| transport | direction | seconds | MB/s | blocks/s | peak managed heap | peak RSS | body intact |");
        Console.WriteLine("|---|---|---:|---:|---:|---:|---:|---|");
        foreach (Uri root in server.LocalUris)
        {
            string scheme = root.Scheme;
            for (int round = 0; round < rounds; round++)
            {
                await MeasureAsync(scheme, "download", size, async () =>
                {
                    using HashingStream sink = new();
                    CoapResponse response = await client.DownloadAsync(new Uri(root, "/large" + query), sink);
                    return response.IsSuccess && sink.Hash() == expected;
                });
                await MeasureAsync(scheme, "upload", size, async () =>
                {
                    CoapResponse response = await client.UploadAsync(new Uri(root, "/upload"), new DeterministicStream(size), CoapContentFormat.OctetStream);
                    return response.Code == CoapCode.Changed && response.GetPayloadString() == expected;
                });
            }
        }

        return 0;
    }

    private static async Task MeasureAsync(string scheme, string direction, int size, Func<Task<bool>> transfer)
    {
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        Memory.ResetPeakRss();
        long peakHeap = 0;
        using CancellationTokenSource done = new();
        Task sampler = Task.Run(async () =>
        {
            while (!done.IsCancellationRequested)
            {
                peakHeap = Math.Max(peakHeap, GC.GetTotalMemory(false));
                await Task.Delay(10);
            }
        });
        Stopwatch watch = Stopwatch.StartNew();
        bool intact = await transfer();
        double seconds = watch.Elapsed.TotalSeconds;
        await done.CancelAsync();
        await sampler;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"| {scheme} | {direction} | {seconds:F2} | {size / seconds / 1e6:F1} | {size / 1024.0 / seconds:N0} | {peakHeap / 1048576.0:F0} MB | {Memory.PeakRss() / 1048576.0:F0} MB | {(intact ? "yes" : "NO")} |"));
    }

    /// <summary>A write-only stream that hashes what it is given and keeps nothing.</summary>
    private sealed class HashingStream : Stream
    {
        private readonly IncrementalHash _hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);

        public override bool CanRead => false;

        public override bool CanSeek => false;

        public override bool CanWrite => true;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public string Hash() => Convert.ToHexStringLower(_hash.GetHashAndReset());

        public override void Write(byte[] buffer, int offset, int count) => _hash.AppendData(buffer, offset, count);

        public override void Write(ReadOnlySpan<byte> buffer) => _hash.AppendData(buffer);

        public override void Flush()
        {
            // Nothing is buffered.
        }

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            _hash.Dispose();
            base.Dispose(disposing);
        }
    }
}
