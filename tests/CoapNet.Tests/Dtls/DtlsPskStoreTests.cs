using System.Security.Authentication;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Dtls.Configuration;
using CoapNet.Messages;
using CoapNet.Simulation;
using CoapNet.Tests.Server;
using Microsoft.Extensions.Configuration;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// A fleet's pre-shared keys: the table changed at run time, the file of one device a line (its format, its errors, its
/// reloading), and the coaps endpoint's "PskFile" key, each through real handshakes on loopback.
/// </summary>
public sealed class DtlsPskStoreTests : IDisposable
{
    private readonly string _folder = Directory.CreateTempSubdirectory("coapnet-psk-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Fact]
    public async Task AFileOfDevicesLetsEachDeviceInWithItsOwnKeyAndNoOtherKey()
    {
        string file = Write("keys.txt", """
            # the fleet, one device a line

            device-1 00112233445566778899aabbccddeeff
            device-2 0A0B0C0D
            """);
        await using LoopbackServer server = StartServer(new DtlsPskFile(file));

        (await Who(server, "device-1", Convert.FromHexString("00112233445566778899aabbccddeeff"))).Should().Be("psk:device-1");
        (await Who(server, "device-2", [10, 11, 12, 13])).Should().Be("psk:device-2", "upper-case hexadecimal is a key too");
        await FailsHandshake(server, "device-2", Convert.FromHexString("00112233445566778899aabbccddeeff"));
        await FailsHandshake(server, "device-3", [10, 11, 12, 13]);
    }

    [Theory]
    [InlineData("device-1", "line 2: expected an identity, one space and the key in hexadecimal")]
    [InlineData("device-1 00112g", "line 2: the key of 'device-1' must be 1 to 64 bytes as hexadecimal digits")]
    [InlineData("device-1 0011223", "line 2: the key of 'device-1' must be")]
    [InlineData("device-1 ", "line 2: the key of 'device-1' must be")]
    [InlineData("device-1 0011 ", "line 2: the key of 'device-1' must be")]
    [InlineData("device-1  0011", "line 2: the key of 'device-1' must be")]
    [InlineData(" device-1 0011", "line 2: the identity must be 1 to 128 printable ASCII characters")]
    [InlineData("dévice 0011", "line 2: the identity must be 1 to 128 printable ASCII characters")]
    [InlineData("ok 2233", "line 2: the identity 'ok' is already on an earlier line")]
    public void AMalformedLineFailsTheWholeFileNamingTheFileAndTheLineButNotTheKey(string line, string problem)
    {
        string file = Write("bad.txt", "ok 0011\n" + line + "\n# after\n");

        Action read = () => _ = new DtlsPskFile(file);

        read.Should().Throw<FormatException>().Which.Message.Should().StartWith(file + ", " + problem).And.NotContain("00112").And.NotContain("2233");
    }

    [Fact]
    public void KeysAndIdentitiesAreBoundedAsTheFormatSays()
    {
        string longest = new('i', 128);
        string file = Write("bounds.txt", $"{longest} {new string('f', 128)}\nx 00\n");
        DtlsPskFile keys = new(file);

        keys.Count.Should().Be(2);
        keys.TryGetKey(System.Text.Encoding.ASCII.GetBytes(longest), out ReadOnlyMemory<byte> key).Should().BeTrue();
        key.ToArray().Should().Equal(Enumerable.Repeat((byte)0xFF, 64));
        FluentActions.Invoking(() => new DtlsPskFile(Write("long-id.txt", $"{longest}i 00\n"))).Should().Throw<FormatException>().WithMessage("*line 1: the identity must be 1 to 128*");
        FluentActions.Invoking(() => new DtlsPskFile(Write("long-key.txt", $"x {new string('f', 130)}\n"))).Should().Throw<FormatException>().WithMessage("*line 1: the key of 'x' must be 1 to 64 bytes*");
    }

    [Fact]
    public async Task AChangedFileIsReadOnTheNextHandshakeAfterASecondAndAnEstablishedSessionKeepsItsKey()
    {
        (string file, ManualTimeProvider time, DtlsPskFile keys) = Watched("device-1 0102\n");
        await using LoopbackServer server = StartServer(keys);
        await using CoapClient old = DtlsLoopback.Client("device-1", [1, 2]);
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/who");
        (await old.GetAsync(uri)).GetPayloadString().Should().Be("psk:device-1");

        // A new key for device-1 and a new device; the same length, so only the modification time tells the change.
        Rewrite(file, "device-1 0304\ndevice-2 0506\n");
        await FailsHandshake(server, "device-2", [5, 6]);
        time.Advance(TimeSpan.FromSeconds(1));

        (await Who(server, "device-2", [5, 6])).Should().Be("psk:device-2", "the file is looked at again once a second has passed");
        (await Who(server, "device-1", [3, 4])).Should().Be("psk:device-1");
        await FailsHandshake(server, "device-1", [1, 2]);
        (await old.GetAsync(uri)).GetPayloadString().Should().Be("psk:device-1", "the session made with the old key goes on until it ends");
        keys.ReloadError.Should().BeNull();
    }

    [Fact]
    public async Task AChangedFileThatIsMalformedKeepsTheKeysInUseAndSaysWhy()
    {
        (string file, ManualTimeProvider time, DtlsPskFile keys) = Watched("device-1 0102\n");
        await using LoopbackServer server = StartServer(keys);

        Rewrite(file, "device-1 0102\ndevice-2\n");
        time.Advance(TimeSpan.FromSeconds(1));

        (await Who(server, "device-1", [1, 2])).Should().Be("psk:device-1");
        keys.ReloadError.Should().BeOfType<FormatException>().Which.Message.Should().Be(file + ", line 2: expected an identity, one space and the key in hexadecimal.");
        FluentActions.Invoking(keys.Reload).Should().Throw<FormatException>();
        (await Who(server, "device-1", [1, 2])).Should().Be("psk:device-1", "a failed Reload keeps the keys too");
    }

    [Fact]
    public async Task ATableChangedAtRunTimeAdmitsAProvisionedDeviceAndRefusesARetiredOneWithoutEndingItsSession()
    {
        DtlsPskTable keys = new();
        await using LoopbackServer server = StartServer(keys);
        await FailsHandshake(server, "device-9", [9]);

        keys.Set("device-9", [9]);
        await using CoapClient device = DtlsLoopback.Client("device-9", [9]);
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/who");
        (await device.GetAsync(uri)).GetPayloadString().Should().Be("psk:device-9");
        keys.Set("device-9", [10]);
        (await Who(server, "device-9", [10])).Should().Be("psk:device-9", "Set replaces a key");
        keys.Remove("device-9").Should().BeTrue();

        await FailsHandshake(server, "device-9", [10]);
        (await device.GetAsync(uri)).GetPayloadString().Should().Be("psk:device-9");
        keys.Count.Should().Be(0);
    }

    [Fact]
    public void ATableFindsEveryIdentityAmongManyAndForgetsExactlyTheRemovedOnes()
    {
        DtlsPskTable keys = new();
        for (int i = 0; i < 5000; i++)
        {
            keys.Set($"device-{i}", BitConverter.GetBytes(i));
        }

        for (int i = 0; i < 5000; i += 2)
        {
            keys.Remove($"device-{i}").Should().BeTrue();
        }

        keys.Remove("device-0").Should().BeFalse();
        for (int i = 5000; i < 6000; i++)
        {
            keys.Set($"device-{i}", BitConverter.GetBytes(i));
        }

        keys.Count.Should().Be(3500);
        for (int i = 0; i < 6000; i++)
        {
            bool found = keys.TryGetKey(System.Text.Encoding.UTF8.GetBytes($"device-{i}"), out ReadOnlyMemory<byte> key);
            found.Should().Be(i >= 5000 || i % 2 == 1, $"device-{i}");
            if (found)
            {
                BitConverter.ToInt32(key.Span).Should().Be(i);
            }
        }

        FluentActions.Invoking(() => keys.Set(string.Empty, [1])).Should().Throw<ArgumentException>().WithParameterName("identity");
        FluentActions.Invoking(() => keys.Set("x", [])).Should().Throw<ArgumentException>().WithParameterName("key");
    }

    [Fact]
    public async Task ACoapsEndpointReadsItsKeysFromThePskFileItsSectionNames()
    {
        string file = Write("fleet.txt", "device-1 0102\n");
        IConfiguration section = Section(new() { ["PskFile"] = file });

        DtlsServerOptions options = DtlsConfiguration.ReadServerOptions(section);
        await using LoopbackServer server = StartServer(options.PskKeys!);

        options.PskKeys.Should().BeOfType<DtlsPskFile>().Which.Path.Should().Be(file);
        (await Who(server, "device-1", [1, 2])).Should().Be("psk:device-1");
        FluentActions.Invoking(() => DtlsConfiguration.ReadServerOptions(Section(new() { ["PskFile"] = Path.Combine(_folder, "missing.txt") })))
            .Should().Throw<IOException>().WithMessage("Coap:Endpoints:secure:Dtls:PskFile names '*missing.txt', which cannot be read*");
        FluentActions.Invoking(() => DtlsConfiguration.ReadServerOptions(Section(new() { ["PskFile"] = file, ["PskKeys:0:Identity"] = "x", ["PskKeys:0:Key"] = "y" })))
            .Should().Throw<FormatException>().WithMessage("Coap:Endpoints:secure:Dtls:PskFile and Coap:Endpoints:secure:Dtls:PskKeys are both set*");
        FluentActions.Invoking(() => DtlsConfiguration.ReadServerOptions(Section(new() { ["PskFile"] = Write("bad.txt", "x\n") })))
            .Should().Throw<FormatException>().WithMessage("*bad.txt, line 1: expected an identity*");
    }

    private static IConfiguration Section(Dictionary<string, string?> settings)
    {
        Dictionary<string, string?> prefixed = [];
        foreach (KeyValuePair<string, string?> pair in settings)
        {
            prefixed["Coap:Endpoints:secure:Dtls:" + pair.Key] = pair.Value;
        }

        return new ConfigurationBuilder().AddInMemoryCollection(prefixed).Build().GetSection("Coap:Endpoints:secure:Dtls");
    }

    private static LoopbackServer StartServer(DtlsPskStore keys)
        => DtlsLoopback.StartServer(s => s.MapGet("/who", request => CoapResponse.Content(request.Peer.Identity!.ToString())), out _, new DtlsServerOptions { PskKeys = keys });

    private static async Task<string> Who(LoopbackServer server, string identity, byte[] key)
    {
        await using CoapClient client = DtlsLoopback.Client(identity, key);
        return (await client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/who"))).GetPayloadString();
    }

    private static async Task FailsHandshake(LoopbackServer server, string identity, byte[] key)
    {
        await using CoapClient client = DtlsLoopback.Client(identity, key);
        Func<Task> get = () => client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/who")).WaitAsync(Infrastructure.Wait.DefaultBound);
        await get.Should().ThrowAsync<AuthenticationException>();
    }

    // The text may keep the file's length: the modification time, a minute on, tells the change.
    private static void Rewrite(string file, string text)
    {
        File.WriteAllText(file, text);
        File.SetLastWriteTimeUtc(file, DateTime.UtcNow.AddMinutes(1));
    }

    /// <summary>A file of keys read by a store whose checks for changes run on a clock the test moves.</summary>
    private (string File, ManualTimeProvider Time, DtlsPskFile Keys) Watched(string text)
    {
        string file = Write("keys.txt", text);
        ManualTimeProvider time = new();
        return (file, time, new DtlsPskFile(file, timeProvider: time));
    }

    private string Write(string name, string text)
    {
        string path = Path.Combine(_folder, name);
        File.WriteAllText(path, text);
        return path;
    }
}
