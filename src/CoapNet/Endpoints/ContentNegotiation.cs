using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using CoapNet.Messages;

namespace CoapNet.Endpoints;

/// <summary>
/// Writes an object in the format the request's Accept asks for (RFC 7252 section 5.10.4): CBOR (60) by its contract,
/// JSON (50) by its metadata in the options of <see cref="CoapHandlerOptions.ConfigureJson"/>; without Accept, <see cref="CoapHandlerOptions.DefaultContentFormat"/>
/// when the type has it, else the other; any other Accept, or one the type has no metadata for, is 4.06 Not Acceptable.
/// </summary>
internal static class ContentNegotiation
{
    public static CoapResponse Write<T>(CoapEndpointContext context, CoapCode code, T value)
    {
        if (value is null)
        {
            return new CoapResponse(code);
        }

        JsonTypeInfo<T>? json = JsonMetadata<T>.Get(context.Options);
        bool cbor = CoapCbor.CanWrite<T>();
        ushort? accept = context.Request.Accept;
        ushort format;
        if (accept is null)
        {
            bool jsonFirst = context.Options.DefaultContentFormat == CoapContentFormat.Json;
            format = (jsonFirst && json is not null) || !cbor ? CoapContentFormat.Json : CoapContentFormat.Cbor;
        }
        else
        {
            format = accept.Value;
        }

        if (format == CoapContentFormat.Cbor && cbor)
        {
            return new CoapResponse(code, CoapCbor.Serialize(value), CoapContentFormat.Cbor);
        }

        if (format == CoapContentFormat.Json && json is not null)
        {
            return new CoapResponse(code, JsonSerializer.SerializeToUtf8Bytes(value, json), CoapContentFormat.Json);
        }

        if (accept is null)
        {
            throw new InvalidOperationException($"{typeof(T).Name} has neither JSON metadata nor a CBOR contract.");
        }

        string offered = (cbor, json is not null) switch
        {
            (true, true) => "60 (application/cbor) or 50 (application/json)",
            (true, false) => "60 (application/cbor)",
            (false, true) => "50 (application/json)",
            _ => "none",
        };

        // JSON is missing only where reflection is off (trimming, Native AOT) and nothing described the type: the build
        // warned of it (COAPGEN006); the client is told why too, not left to guess at a bare 4.06.
        string why = format == CoapContentFormat.Json && json is null
            ? $" ({typeof(T).Name} has no JSON metadata in this build: see warning COAPGEN006, or add it to Handlers.JsonTypeInfoResolver)"
            : string.Empty;
        return CoapResponse.Diagnostic(CoapCode.NotAcceptable, $"Accept {accept}: this resource is available as {offered}{why}.");
    }

    /// <summary>The success code of a method's implicit result: 2.05 for GET and FETCH, 2.02 for DELETE, 2.04 for the rest (RFC 7252 section 5.9.1).</summary>
    public static CoapCode SuccessCode(CoapCode method)
    {
        if (method == CoapCode.Get || method == CoapCode.Fetch)
        {
            return CoapCode.Content;
        }

        return method == CoapCode.Delete ? CoapCode.Deleted : CoapCode.Changed;
    }

    /// <summary>
    /// The metadata of <typeparamref name="T"/> in a server's JSON options, looked up once per options: a lookup walks
    /// the resolver chain (a generated context answers with a chain of type tests), which every response would otherwise pay.
    /// </summary>
    internal static class JsonMetadata<T>
    {
        private static Entry? s_last;

        public static JsonTypeInfo<T>? Get(CoapHandlerOptions options)
        {
            JsonSerializerOptions json = options.Json;
            Entry? entry = Volatile.Read(ref s_last);
            if (entry is null || !ReferenceEquals(entry.Options, json))
            {
                entry = new Entry(json, options.GetJsonTypeInfo(typeof(T)) as JsonTypeInfo<T>);
                Volatile.Write(ref s_last, entry);
            }

            return entry.Info;
        }

        private sealed record Entry(JsonSerializerOptions Options, JsonTypeInfo<T>? Info);
    }
}
