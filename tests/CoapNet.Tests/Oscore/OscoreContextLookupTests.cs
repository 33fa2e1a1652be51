using CoapNet.Oscore;

namespace CoapNet.Tests.Oscore;

/// <summary>How a server finds a request's context by its kid and 'kid context' (RFC 8613 section 8.2, step 2), which it does for every request.</summary>
public sealed class OscoreContextLookupTests
{
    private static readonly byte[] Secret = Convert.FromHexString("0102030405060708090a0b0c0d0e0f10");

    [Fact]
    public void A_kid_finds_its_context_by_kid_context_or_the_one_without_ID_Context_first()
    {
        OscoreContext plain = Context([0x0a], null);
        OscoreContext first = Context([0x0a], [0x01]);
        OscoreContext second = Context([0x0a], [0x02]);
        OscoreContext empty = Context([], null);
        OscoreContext onlyWithContext = Context([0x0c], [0x03]);
        OscoreOptions options = new OscoreOptions()
            .AddServerContext(first).AddServerContext(plain).AddServerContext(second).AddServerContext(empty).AddServerContext(onlyWithContext);

        options.ForClient([0x0a], new byte[] { 0x02 }).Should().BeSameAs(second);
        options.ForClient([0x0a], new byte[] { 0x01 }).Should().BeSameAs(first);
        options.ForClient([0x0a], null).Should().BeSameAs(plain, "without a kid context the context without ID Context comes first");
        options.ForClient([0x0c], null).Should().BeSameAs(onlyWithContext, "then the first added with that kid");
        options.ForClient([], null).Should().BeSameAs(empty);
        options.ForClient([0x0a], new byte[] { 0x09 }).Should().BeNull();
        options.ForClient([0x00, 0x0a], null).Should().BeNull("a kid with a leading zero byte is another kid");
        options.ForClient([1, 2, 3, 4, 5, 6, 7, 8], null).Should().BeNull("no ID is longer than 7 bytes");

        Action twice = () => options.AddServerContext(Context([0x0a], [0x01]));
        twice.Should().Throw<ArgumentException>().WithParameterName("context");
    }

    [Fact]
    public void Finding_a_context_allocates_nothing()
    {
        OscoreOptions options = new OscoreOptions().AddServerContext(Context([0x0a], null)).AddServerContext(Context([0x0a], [0x01]));
        ReadOnlyMemory<byte>? kidContext = new byte[] { 0x01 };
        byte[] kid = [0x0a];
        options.ForClient(kid, kidContext).Should().NotBeNull();
        options.ForClient(kid, null).Should().NotBeNull();

        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 1000; i++)
        {
            _ = options.ForClient(kid, kidContext);
            _ = options.ForClient(kid, null);
        }

        (GC.GetAllocatedBytesForCurrentThread() - before).Should().Be(0);
    }

    private static OscoreContext Context(byte[] recipientId, byte[]? idContext) => new(new OscoreContextOptions
    {
        MasterSecret = Secret,
        SenderId = [0x7f],
        RecipientId = recipientId,
        IdContext = idContext,
    });
}
