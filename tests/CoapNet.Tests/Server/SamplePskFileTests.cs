using CoapNet.Samples.Server;

namespace CoapNet.Tests.Server;

/// <summary>The key file of the sample server's --psk-file, in the format benchmarks/tools/coap-fleet.c writes.</summary>
public sealed class SamplePskFileTests : IDisposable
{
    private readonly string _path = Path.Combine(Path.GetTempPath(), $"coapnet-psk-{Guid.NewGuid():N}.txt");

    [Fact]
    public void Reads_each_identity_and_its_key_and_skips_comments_and_blank_lines()
    {
        File.WriteAllText(_path, "# coap-fleet key file\ndev-000001 00112233445566778899aabbccddeeff\n\r\ndash-001 ffeeddccbbaa99887766554433221100\r\n");

        Dictionary<string, byte[]> keys = SamplePskFile.Load(_path);

        keys.Keys.Should().BeEquivalentTo("dev-000001", "dash-001");
        keys["dev-000001"].Should().Equal(Convert.FromHexString("00112233445566778899aabbccddeeff"));
        keys["dash-001"].Should().Equal(Convert.FromHexString("ffeeddccbbaa99887766554433221100"));
    }

    [Theory]
    [InlineData("dev-000001 0011", "line 2")]
    [InlineData("dev-000001", "line 2")]
    [InlineData(" 00112233445566778899aabbccddeeff", "line 2")]
    [InlineData("dev-000001 00112233445566778899aabbccddeefg", "line 2")]
    [InlineData("dev-000009 00112233445566778899aabbccddeeff", "line 2: the identity 'dev-000009' comes twice")]
    public void A_line_that_is_not_an_identity_and_a_key_is_an_error_naming_it(string line, string expected)
    {
        File.WriteAllText(_path, $"dev-000009 00112233445566778899aabbccddeeff\n{line}\n");

        Action load = () => SamplePskFile.Load(_path);

        load.Should().Throw<FormatException>().Which.Message.Should().Contain(expected);
    }

    public void Dispose() => File.Delete(_path);
}
