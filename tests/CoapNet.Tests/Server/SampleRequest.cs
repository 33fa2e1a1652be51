using CoapNet.Messages;

namespace CoapNet.Tests.Server;

/// <summary>A request of the sample-resource suite, in terms every client under test can send.</summary>
internal sealed record SampleRequest(CoapCode Method, string PathAndQuery)
{
    public string? Payload { get; init; }

    public ushort? ContentFormat { get; init; }

    public ushort? Accept { get; init; }

    /// <summary>Extra options, in order, such as an unregistered one or If-Match with an ETag (libcoap sends them with -O).</summary>
    public IReadOnlyList<(ushort Number, byte[] Value)> Options { get; init; } = [];
}
