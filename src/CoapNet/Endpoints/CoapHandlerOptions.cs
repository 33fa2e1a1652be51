using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;
using CoapNet.Messages;

namespace CoapNet.Endpoints;

/// <summary>
/// What handlers with bound parameters (<c>MapGet("/lamps/{id:int}", (int id, LampStore store) =&gt; ...)</c>) take from
/// the application: JSON metadata for their types, the services they ask for, and the format an object is sent in when
/// the request has no Accept option.
/// </summary>
public sealed class CoapHandlerOptions
{
    private IJsonTypeInfoResolver? _json;
    private JsonSerializerOptions? _jsonOptions;

    /// <summary>
    /// The source-generated System.Text.Json metadata (a <see cref="JsonSerializerContext"/> with
    /// <c>[JsonSerializable(typeof(Lamp))]</c>, or several combined) that reads JSON payloads (Content-Format 50) into
    /// parameters and writes returned objects as JSON: no reflection, so a trimmed or Native AOT server keeps it. Null: no JSON.
    /// </summary>
    /// <remarks>An interface, so configuration binding (Hosting binds these options from "Coap") leaves it to code.</remarks>
    public IJsonTypeInfoResolver? JsonTypeInfoResolver
    {
        get => _json;
        set
        {
            _json = value;
            _jsonOptions = null;
        }
    }

    /// <summary>
    /// The services handlers' parameters are resolved from (<c>[FromServices]</c>, or any parameter whose type the provider
    /// knows): each request gets a scope of its own, disposed once the response is made. Hosting sets it to the host's.
    /// </summary>
    public IServiceProvider? Services { get; set; }

    /// <summary>
    /// The Content-Format a returned object is written in when the request names none (no Accept):
    /// <see cref="CoapContentFormat.Cbor"/> (60, the default: the compact form constrained peers parse cheaply) or
    /// <see cref="CoapContentFormat.Json"/> (50). When the object's type has no metadata for it, the other is used.
    /// </summary>
    public ushort DefaultContentFormat { get; set; } = CoapContentFormat.Cbor;

    /// <summary>The metadata of <paramref name="type"/>, or null when the resolver has none (or there is no resolver).</summary>
    internal JsonTypeInfo? GetJsonTypeInfo(Type type)
    {
        switch (_json)
        {
            case null:
                return null;
            case JsonSerializerContext context:
                return context.GetTypeInfo(type);
            default:
                // A resolver that is not a context (JsonTypeInfoResolver.Combine) hands out metadata for options it is given.
                _jsonOptions ??= new JsonSerializerOptions { TypeInfoResolver = _json };
                return _json.GetTypeInfo(type, _jsonOptions);
        }
    }

    internal void Validate()
    {
        if (DefaultContentFormat is not (CoapContentFormat.Cbor or CoapContentFormat.Json))
        {
            throw new ArgumentException($"Handlers.DefaultContentFormat is {DefaultContentFormat}; it must be 60 (application/cbor) or 50 (application/json).", nameof(DefaultContentFormat));
        }
    }
}
