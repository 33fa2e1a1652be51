using System.ComponentModel;
using System.Formats.Cbor;
using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using CoapNet.Messages;
using Microsoft.Extensions.DependencyInjection;

namespace CoapNet.Endpoints;

/// <summary>
/// What the generated binding code calls, one method per kind of parameter and result: each reads from where the
/// parameter's <see cref="CoapParameterInfo"/> says, and a failure leaves a 4.00 Bad Request (or 4.15) with a diagnostic
/// naming the parameter in <see cref="CoapEndpointContext.BindingFailure"/> (RFC 7252 section 5.9.2.1), never an
/// exception to the transport. Generic over the parameter's type, so no reflection runs. Not for applications.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public static class CoapBinder
{
    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    /// <summary>Binds a route value or Uri-Query argument that must be present, by the type's own invariant parsing.</summary>
    /// <typeparam name="T">A type with <see cref="ISpanParsable{TSelf}"/>: int, long, Guid, bool, double, ...</typeparam>
    /// <param name="context">The request's context.</param>
    /// <param name="index">The parameter's position.</param>
    /// <param name="value">The value.</param>
    /// <returns>False with <see cref="CoapEndpointContext.BindingFailure"/> set when absent or not parsable.</returns>
    public static bool TryBindParsable<T>(CoapEndpointContext context, int index, out T value)
        where T : ISpanParsable<T>
    {
        string? raw = Raw(context, index);
        if (raw is not null && T.TryParse(raw, CultureInfo.InvariantCulture, out T? parsed))
        {
            value = parsed;
            return true;
        }

        value = default!;
        return Fail(context, index, raw, typeof(T).Name);
    }

    /// <summary>Binds an optional route value or Uri-Query argument: absent is null; present, it must parse.</summary>
    /// <typeparam name="T">A value type with <see cref="ISpanParsable{TSelf}"/>.</typeparam>
    /// <param name="context">The request's context.</param>
    /// <param name="index">The parameter's position.</param>
    /// <param name="value">The value, or null when absent.</param>
    /// <returns>False with <see cref="CoapEndpointContext.BindingFailure"/> set when present but not parsable.</returns>
    public static bool TryBindOptionalParsable<T>(CoapEndpointContext context, int index, out T? value)
        where T : struct, ISpanParsable<T>
    {
        string? raw = Raw(context, index);
        if (raw is null)
        {
            value = null;
            return true;
        }

        if (T.TryParse(raw, CultureInfo.InvariantCulture, out T parsed))
        {
            value = parsed;
            return true;
        }

        value = null;
        return Fail(context, index, raw, typeof(T).Name);
    }

    /// <summary>Binds an enum by name (case-insensitive) or by a defined number.</summary>
    /// <typeparam name="T">The enum.</typeparam>
    /// <param name="context">The request's context.</param>
    /// <param name="index">The parameter's position.</param>
    /// <param name="value">The value.</param>
    /// <returns>False with <see cref="CoapEndpointContext.BindingFailure"/> set when absent or not a member.</returns>
    public static bool TryBindEnum<T>(CoapEndpointContext context, int index, out T value)
        where T : struct, Enum
    {
        string? raw = Raw(context, index);
        if (raw is not null && TryParseEnum(raw, out value))
        {
            return true;
        }

        value = default;
        return Fail(context, index, raw, "one of " + string.Join(", ", Enum.GetNames<T>()));
    }

    /// <summary>Binds an optional enum: absent is null.</summary>
    /// <typeparam name="T">The enum.</typeparam>
    /// <param name="context">The request's context.</param>
    /// <param name="index">The parameter's position.</param>
    /// <param name="value">The value, or null when absent.</param>
    /// <returns>False with <see cref="CoapEndpointContext.BindingFailure"/> set when present but not a member.</returns>
    public static bool TryBindOptionalEnum<T>(CoapEndpointContext context, int index, out T? value)
        where T : struct, Enum
    {
        string? raw = Raw(context, index);
        if (raw is null)
        {
            value = null;
            return true;
        }

        if (TryParseEnum(raw, out T parsed))
        {
            value = parsed;
            return true;
        }

        value = null;
        return Fail(context, index, raw, "one of " + string.Join(", ", Enum.GetNames<T>()));
    }

    /// <summary>Binds a string route value or Uri-Query argument; an optional one may be absent (null).</summary>
    /// <param name="context">The request's context.</param>
    /// <param name="index">The parameter's position.</param>
    /// <param name="value">The value.</param>
    /// <returns>False with <see cref="CoapEndpointContext.BindingFailure"/> set when a required one is absent.</returns>
    public static bool TryBindString(CoapEndpointContext context, int index, out string? value)
    {
        value = Raw(context, index);
        return value is not null || context.Endpoint.Parameter(index).IsOptional || Fail(context, index, null, "text");
    }

    /// <summary>Resolves a service from the request's scope; for a parameter without attribute, only when the provider knows its type.</summary>
    /// <typeparam name="T">The service type.</typeparam>
    /// <param name="context">The request's context.</param>
    /// <param name="index">The parameter's position.</param>
    /// <returns>The service, or null for an optional one the provider lacks.</returns>
    /// <exception cref="InvalidOperationException">A required service is not registered (a server misconfiguration: 5.00).</exception>
    public static T? GetService<T>(CoapEndpointContext context, int index)
        where T : notnull
        => context.Endpoint.Parameter(index).IsOptional ? context.RequestServices.GetService<T>() : context.RequestServices.GetRequiredService<T>();

    /// <summary>True when a complex parameter without attribute is bound from the services rather than the payload.</summary>
    /// <param name="context">The request's context.</param>
    /// <param name="index">The parameter's position.</param>
    /// <returns>True for a service.</returns>
    public static bool IsService(CoapEndpointContext context, int index) => context.Endpoint.IsService(index);

    /// <summary>
    /// Binds the payload into a value by its Content-Format: JSON (50) by the application's metadata, CBOR (60) by the
    /// type's contract; another format is 4.15 (RFC 7252 section 5.10.3), an empty payload or one that does not decode 4.00.
    /// </summary>
    /// <typeparam name="T">The value's type.</typeparam>
    /// <param name="context">The request's context.</param>
    /// <param name="index">The parameter's position.</param>
    /// <param name="value">The value.</param>
    /// <returns>False with <see cref="CoapEndpointContext.BindingFailure"/> set when it cannot be bound.</returns>
    public static bool TryBindBody<T>(CoapEndpointContext context, int index, out T? value)
    {
        value = default;
        CoapParameterInfo parameter = context.Endpoint.Parameter(index);
        ReadOnlyMemory<byte> payload = context.Request.Payload;
        if (payload.IsEmpty)
        {
            return parameter.IsOptional || Failed(context, CoapCode.BadRequest, $"The parameter '{parameter.Name}' is read from the payload, which is empty.");
        }

        ushort? format = context.Request.ContentFormat;
        JsonTypeInfo<T>? json = format == CoapContentFormat.Json ? ContentNegotiation.JsonMetadata<T>.Get(context.Options) : null;
        try
        {
            if (json is not null)
            {
                value = JsonSerializer.Deserialize(payload.Span, json);
            }
            else if (format == CoapContentFormat.Cbor && CoapCbor.CanRead<T>())
            {
                value = CoapCbor.Deserialize<T>(payload);
            }
            else
            {
                return Failed(context, CoapCode.UnsupportedContentFormat, $"The payload of '{parameter.Name}' must be {Readable<T>(context)}; Content-Format {(format is ushort f ? f.ToString(CultureInfo.InvariantCulture) : "(none)")} is not.");
            }
        }
        catch (Exception e) when (e is JsonException or CborContentException or InvalidOperationException or FormatException or OverflowException or ArgumentException)
        {
            return Failed(context, CoapCode.BadRequest, $"The payload is not a valid {typeof(T).Name} for '{parameter.Name}': {e.Message}");
        }

        return value is not null || parameter.IsOptional || Failed(context, CoapCode.BadRequest, $"The payload of '{parameter.Name}' is null.");
    }

    /// <summary>Binds the payload as UTF-8 text (text/plain or no Content-Format).</summary>
    /// <param name="context">The request's context.</param>
    /// <param name="index">The parameter's position.</param>
    /// <param name="value">The text.</param>
    /// <returns>False with <see cref="CoapEndpointContext.BindingFailure"/> set for another format or bytes that are not UTF-8.</returns>
    public static bool TryBindText(CoapEndpointContext context, int index, out string? value)
    {
        value = null;
        CoapParameterInfo parameter = context.Endpoint.Parameter(index);
        if (context.Request.ContentFormat is ushort format && format != CoapContentFormat.TextPlain)
        {
            return Failed(context, CoapCode.UnsupportedContentFormat, $"The payload of '{parameter.Name}' must be text/plain (0).");
        }

        ReadOnlyMemory<byte> payload = context.Request.Payload;
        if (payload.IsEmpty && !parameter.IsOptional)
        {
            return Failed(context, CoapCode.BadRequest, $"The parameter '{parameter.Name}' is read from the payload, which is empty.");
        }

        try
        {
            value = payload.IsEmpty ? null : StrictUtf8.GetString(payload.Span);
            return true;
        }
        catch (DecoderFallbackException)
        {
            return Failed(context, CoapCode.BadRequest, $"The payload of '{parameter.Name}' is not UTF-8 text.");
        }
    }

    /// <summary>The payload as a read-only stream.</summary>
    /// <param name="context">The request's context.</param>
    /// <returns>The stream.</returns>
    public static Stream BodyStream(CoapEndpointContext context)
    {
        ReadOnlyMemory<byte> payload = context.Request.Payload;
        return System.Runtime.InteropServices.MemoryMarshal.TryGetArray(payload, out ArraySegment<byte> segment)
            ? new MemoryStream(segment.Array!, segment.Offset, segment.Count, writable: false)
            : new MemoryStream(payload.ToArray(), writable: false);
    }

    /// <summary>A returned object, as content the request accepts, with the method's success code.</summary>
    /// <typeparam name="T">The object's type.</typeparam>
    /// <param name="context">The request's context.</param>
    /// <param name="value">The object.</param>
    /// <returns>The response.</returns>
    public static CoapResponse WriteObject<T>(CoapEndpointContext context, T value)
        => ContentNegotiation.Write(context, ContentNegotiation.SuccessCode(context.Request.Method), value);

    /// <summary>A returned <see cref="ICoapResult"/>.</summary>
    /// <param name="context">The request's context.</param>
    /// <param name="result">The result.</param>
    /// <returns>The response.</returns>
    /// <exception cref="InvalidOperationException">The handler returned null.</exception>
    public static CoapResponse WriteResult(CoapEndpointContext context, ICoapResult? result)
        => (result ?? throw new InvalidOperationException($"The handler of {context.Template} returned a null result.")).ToResponse(context);

    /// <summary>Returned text, as text/plain with the method's success code.</summary>
    /// <param name="context">The request's context.</param>
    /// <param name="text">The text; null for no payload.</param>
    /// <returns>The response.</returns>
    public static CoapResponse WriteText(CoapEndpointContext context, string? text)
    {
        CoapCode code = ContentNegotiation.SuccessCode(context.Request.Method);
        return text is null ? new CoapResponse(code) : new CoapResponse(code, text);
    }

    /// <summary>Returned bytes, as application/octet-stream with the method's success code.</summary>
    /// <param name="context">The request's context.</param>
    /// <param name="payload">The bytes.</param>
    /// <returns>The response.</returns>
    public static CoapResponse WriteBytes(CoapEndpointContext context, ReadOnlyMemory<byte> payload)
        => new(ContentNegotiation.SuccessCode(context.Request.Method), payload, CoapContentFormat.OctetStream);

    /// <summary>No result (void or a bare task): the method's success code without payload.</summary>
    /// <param name="context">The request's context.</param>
    /// <returns>The response.</returns>
    public static CoapResponse WriteEmpty(CoapEndpointContext context) => new(ContentNegotiation.SuccessCode(context.Request.Method));

    /// <summary>A returned <see cref="CoapResponse"/>, as it is.</summary>
    /// <param name="context">The request's context.</param>
    /// <param name="response">The response.</param>
    /// <returns>The response.</returns>
    /// <exception cref="InvalidOperationException">The handler returned null.</exception>
    public static CoapResponse WriteResponse(CoapEndpointContext context, CoapResponse? response)
        => response ?? throw new InvalidOperationException($"The handler of {context.Template} returned a null response.");

    private static string? Raw(CoapEndpointContext context, int index)
    {
        string name = context.Endpoint.Parameter(index).Name;
        return context.Endpoint.FromRoute(index) ? context.Request.GetRouteValue(name) : context.Request.GetQueryValue(name);
    }

    private static bool TryParseEnum<T>(string raw, out T value)
        where T : struct, Enum
        => Enum.TryParse(raw, ignoreCase: true, out value) && Enum.IsDefined(value);

    private static bool Fail(CoapEndpointContext context, int index, string? raw, string expected)
    {
        CoapParameterInfo parameter = context.Endpoint.Parameter(index);
        string where = context.Endpoint.FromRoute(index) ? "route value" : "Uri-Query argument";
        if (raw is null)
        {
            return Failed(context, CoapCode.BadRequest, $"The parameter '{parameter.Name}' is required: give it as the {where} '{parameter.Name}'.");
        }

        string shown = raw.Length > 64 ? raw[..64] + "..." : raw;
        return Failed(context, CoapCode.BadRequest, $"The parameter '{parameter.Name}' must be {expected}; the {where} '{shown}' is not.");
    }

    private static bool Failed(CoapEndpointContext context, CoapCode code, string diagnostic)
    {
        context.BindingFailure = CoapResponse.Diagnostic(code, diagnostic);
        return false;
    }

    private static string Readable<T>(CoapEndpointContext context)
    {
        bool json = ContentNegotiation.JsonMetadata<T>.Get(context.Options) is not null;
        bool cbor = CoapCbor.CanRead<T>();
        return (json, cbor) switch
        {
            (true, true) => "application/json (50) or application/cbor (60)",
            (true, false) => "application/json (50)",
            (false, true) => "application/cbor (60)",
            _ => "in a format this server has no metadata for",
        };
    }
}
