using CoapNet.Messages;

namespace CoapNet.Endpoints;

/// <summary>
/// Typed results for handlers with bound parameters: <c>return found is null ? CoapResults.NotFound() : CoapResults.Content(found);</c>.
/// Objects are written in the format the request accepts (CBOR or JSON); errors carry a diagnostic payload (RFC 7252 section 5.5.2).
/// </summary>
public static class CoapResults
{
    /// <summary>2.05 Content with <paramref name="value"/> in the format the request accepts (JSON 50 or CBOR 60; 4.06 when neither).</summary>
    /// <typeparam name="T">The value's type: it needs JSON metadata or a CBOR contract.</typeparam>
    /// <param name="value">The value.</param>
    /// <returns>The result.</returns>
    public static ICoapResult Content<T>(T value) => new ObjectResult<T>(CoapCode.Content, value, null);

    /// <summary>2.05 Content with a text/plain payload.</summary>
    /// <param name="text">The text.</param>
    /// <returns>The result.</returns>
    public static ICoapResult Text(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        return new ResponseResult(CoapResponse.Content(text));
    }

    /// <summary>2.05 Content with a payload in a format of the handler's choosing.</summary>
    /// <param name="payload">The payload.</param>
    /// <param name="contentFormat">Its Content-Format.</param>
    /// <returns>The result.</returns>
    public static ICoapResult Bytes(ReadOnlyMemory<byte> payload, ushort contentFormat) => new ResponseResult(CoapResponse.Content(payload, contentFormat));

    /// <summary>2.01 Created (RFC 7252 section 5.9.1.1), with the new resource's location as Location-Path and Location-Query.</summary>
    /// <param name="location">The location, such as "/lamps/7" or "/lamps/7?v=2"; null for none.</param>
    /// <returns>The result.</returns>
    /// <exception cref="ArgumentException">The location does not start with '/'.</exception>
    public static ICoapResult Created(string? location = null) => new ObjectResult<object?>(CoapCode.Created, null, CheckLocation(location));

    /// <summary>2.01 Created with its location and a representation of what was created.</summary>
    /// <typeparam name="T">The value's type.</typeparam>
    /// <param name="location">The location, such as "/lamps/7".</param>
    /// <param name="value">The value, written as the request accepts.</param>
    /// <returns>The result.</returns>
    /// <exception cref="ArgumentException">The location does not start with '/'.</exception>
    public static ICoapResult Created<T>(string? location, T value) => new ObjectResult<T>(CoapCode.Created, value, CheckLocation(location));

    /// <summary>2.04 Changed (RFC 7252 section 5.9.1.4).</summary>
    /// <returns>The result.</returns>
    public static ICoapResult Changed() => new ResponseResult(new CoapResponse(CoapCode.Changed));

    /// <summary>2.04 Changed with a representation, written as the request accepts.</summary>
    /// <typeparam name="T">The value's type.</typeparam>
    /// <param name="value">The value.</param>
    /// <returns>The result.</returns>
    public static ICoapResult Changed<T>(T value) => new ObjectResult<T>(CoapCode.Changed, value, null);

    /// <summary>2.02 Deleted (RFC 7252 section 5.9.1.2).</summary>
    /// <returns>The result.</returns>
    public static ICoapResult Deleted() => new ResponseResult(new CoapResponse(CoapCode.Deleted));

    /// <summary>4.00 Bad Request with a diagnostic.</summary>
    /// <param name="diagnostic">What is wrong with the request, or null.</param>
    /// <returns>The result.</returns>
    public static ICoapResult BadRequest(string? diagnostic = null) => Problem(CoapCode.BadRequest, diagnostic);

    /// <summary>4.04 Not Found with a diagnostic.</summary>
    /// <param name="diagnostic">What was not found, or null.</param>
    /// <returns>The result.</returns>
    public static ICoapResult NotFound(string? diagnostic = null) => Problem(CoapCode.NotFound, diagnostic);

    /// <summary>4.01 Unauthorized (RFC 7252 section 5.9.2.2): the peer should authenticate before it tries again.</summary>
    /// <param name="diagnostic">Why, or null.</param>
    /// <returns>The result.</returns>
    public static ICoapResult Unauthorized(string? diagnostic = null) => Problem(CoapCode.Unauthorized, diagnostic);

    /// <summary>4.03 Forbidden (RFC 7252 section 5.9.2.4): this peer may not do this.</summary>
    /// <param name="diagnostic">Why, or null.</param>
    /// <returns>The result.</returns>
    public static ICoapResult Forbidden(string? diagnostic = null) => Problem(CoapCode.Forbidden, diagnostic);

    /// <summary>An error response (4.xx or 5.xx) with a diagnostic payload: UTF-8 text without Content-Format (RFC 7252 section 5.5.2).</summary>
    /// <param name="code">The error code.</param>
    /// <param name="diagnostic">A short explanation for a person, or null for no payload.</param>
    /// <returns>The result.</returns>
    /// <exception cref="ArgumentException"><paramref name="code"/> is not a 4.xx or 5.xx code.</exception>
    public static ICoapResult Problem(CoapCode code, string? diagnostic)
    {
        if (code.Class is not (4 or 5))
        {
            throw new ArgumentException($"{code} is not an error code (4.xx or 5.xx).", nameof(code));
        }

        return new ResponseResult(diagnostic is null ? new CoapResponse(code) : CoapResponse.Diagnostic(code, diagnostic));
    }

    /// <summary>A response made by hand.</summary>
    /// <param name="response">The response.</param>
    /// <returns>The result.</returns>
    public static ICoapResult Response(CoapResponse response)
    {
        ArgumentNullException.ThrowIfNull(response);
        return new ResponseResult(response);
    }

    private static string? CheckLocation(string? location)
    {
        if (location is not null && (location.Length == 0 || location[0] != '/'))
        {
            throw new ArgumentException($"The location '{location}' must be a path starting with '/'.", nameof(location));
        }

        return location;
    }

    /// <summary>A fixed response; the server never writes into a handler's message, so one result may answer many requests.</summary>
    private sealed class ResponseResult(CoapResponse response) : ICoapResult
    {
        public CoapResponse ToResponse(CoapEndpointContext context) => response;
    }

    private sealed class ObjectResult<T>(CoapCode code, T value, string? location) : ICoapResult
    {
        public CoapResponse ToResponse(CoapEndpointContext context)
        {
            CoapResponse response = ContentNegotiation.Write(context, code, value);
            if (location is not null && response.Code == code)
            {
                int query = location.IndexOf('?', StringComparison.Ordinal);
                response.Message.LocationPath = query < 0 ? location : location[..query];
                if (query >= 0)
                {
                    response.Message.LocationQuery = location[(query + 1)..];
                }
            }

            return response;
        }
    }
}
