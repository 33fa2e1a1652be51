using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Samples.Hosted;

/// <summary>/hello: resolved from dependency injection for each request, with that request's <see cref="Greeter"/>.</summary>
public sealed class HelloResource(Greeter greeter) : CoapResource
{
    /// <inheritdoc/>
    public override string? Title => "Greeting";

    /// <inheritdoc/>
    public override IReadOnlyList<ushort> ContentFormats => [CoapContentFormat.TextPlain];

    /// <inheritdoc/>
    public override CoapResponse Get(CoapRequest request) => CoapResponse.Content(greeter.Greet());
}
