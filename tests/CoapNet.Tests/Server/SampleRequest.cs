using CoapNet.Messages;

namespace CoapNet.Tests.Server;

/// <summary>A request of the sample-resource suite, in terms every client under test can send.</summary>
internal sealed record SampleRequest(CoapCode Method, string PathAndQuery)
{
    public string? Payload { get; init; }

    public ushort? ContentFormat { get; init; }

    public ushort? Accept { get; init; }

    /// <summary>One extra option with a text value, such as an unregistered one.</summary>
    public (ushort Number, string Value)? Option { get; init; }
}
