using Microsoft.CodeAnalysis;

namespace CoapNet.Generators;

/// <summary>What the generator reports, by the id the models carry.</summary>
internal static class Descriptors
{
    public static readonly DiagnosticDescriptor UnsupportedParameter = new(
        "COAPGEN001",
        "A handler parameter cannot be bound",
        "The parameter '{0}' of the handler mapped by {1} cannot be bound: {2}",
        "CoapNet.Handlers",
        DiagnosticSeverity.Error,
        isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor UnknownDelegate = new(
        "COAPGEN002",
        "The handler's parameters are not known at compile time",
        "The handler mapped by {0} {1}; pass a lambda, a method, or a delegate of a concrete type (Func<...>)",
        "CoapNet.Handlers",
        DiagnosticSeverity.Error,
        isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor SeveralBodies = new(
        "COAPGEN003",
        "Several parameters read the payload",
        "The parameters '{0}' and '{1}' of the handler mapped by {2} both read the payload, and a request has one; mark services [FromServices]",
        "CoapNet.Handlers",
        DiagnosticSeverity.Error,
        isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor UnsupportedResult = new(
        "COAPGEN004",
        "A handler's result cannot be a response",
        "The handler mapped by {0} returns {1}, which cannot be made into a response: {2}",
        "CoapNet.Handlers",
        DiagnosticSeverity.Error,
        isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor NoCborContract = new(
        "COAPGEN005",
        "A type gets no CBOR contract",
        "{0} gets no CBOR contract: {1}; it is offered as JSON only, unless a contract is registered with CoapCbor.Register",
        "CoapNet.Handlers",
        DiagnosticSeverity.Info,
        isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor NoJsonMetadata = new(
        "COAPGEN006",
        "A type gets no JSON metadata in a trimmed or Native AOT build",
        "{0} gets no JSON metadata from CoapNet's generator: {1}; with reflection off (trimming, Native AOT) JSON for it is refused (4.06, 4.15) unless a JsonSerializerContext with [JsonSerializable(typeof({0}))] is set as CoapServerOptions.Handlers.JsonTypeInfoResolver",
        "CoapNet.Handlers",
        DiagnosticSeverity.Warning,
        isEnabledByDefault: true);

    public static DiagnosticDescriptor ById(string id) => id switch
    {
        "COAPGEN001" => UnsupportedParameter,
        "COAPGEN002" => UnknownDelegate,
        "COAPGEN003" => SeveralBodies,
        "COAPGEN004" => UnsupportedResult,
        "COAPGEN006" => NoJsonMetadata,
        _ => NoCborContract,
    };
}
