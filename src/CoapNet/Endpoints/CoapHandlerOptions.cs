using System.Text.Json.Serialization;
using CoapNet.Messages;

namespace CoapNet.Endpoints;

/// <summary>
/// What handlers with bound parameters (<c>MapGet("/lamps/{id:int}", (int id, LampStore store) =&gt; ...)</c>) take from
/// the application: JSON metadata for their types, the services they ask for, and the format an object is sent in when
/// the request has no Accept option.
/// </summary>
public sealed class CoapHandlerOptions
{
    /// <summary>
    /// The source-generated System.Text.Json metadata (a <see cref="JsonSerializerContext"/> with
    /// <c>[JsonSerializable(typeof(Lamp))]</c>) that reads JSON payloads (Content-Format 50) into parameters and writes
    /// returned objects as JSON: no reflection, so a trimmed or Native AOT server keeps it. Null: no JSON.
    /// </summary>
    public JsonSerializerContext? JsonSerializerContext { get; set; }

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

    internal void Validate()
    {
        if (DefaultContentFormat is not (CoapContentFormat.Cbor or CoapContentFormat.Json))
        {
            throw new ArgumentException($"Handlers.DefaultContentFormat is {DefaultContentFormat}; it must be 60 (application/cbor) or 50 (application/json).", nameof(DefaultContentFormat));
        }
    }
}
