using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;
using CoapNet.Messages;

namespace CoapNet.Endpoints;

/// <summary>
/// What handlers with bound parameters (<c>MapGet("/lamps/{id:int}", (int id, LampStore store) =&gt; ...)</c>) take from
/// the application: how JSON is read and written, the services they ask for, and the format an object is sent in when
/// the request has no Accept option.
/// </summary>
public sealed class CoapHandlerOptions
{
    private readonly JsonSerializerOptions _jsonOptions = new(JsonSerializerDefaults.Web);
    private IJsonTypeInfoResolver? _json;
    private JsonSerializerOptions? _effective;

    /// <summary>
    /// Changes how JSON payloads (Content-Format 50) are read into parameters and returned objects written. They start
    /// as ASP.NET Core's minimal APIs' do, <see cref="JsonSerializerDefaults.Web"/>: camelCase names, names matched
    /// without regard to case, numbers also read from strings. <c>json =&gt; json.PropertyNamingPolicy = null</c> writes
    /// the properties' own names; <c>json =&gt; json.Converters.Add(new JsonStringEnumConverter&lt;Color&gt;())</c> an
    /// enum by name.
    /// </summary>
    /// <remarks>
    /// A method rather than a settable <see cref="System.Text.Json.JsonSerializerOptions"/>, so configuration binding
    /// (Hosting binds these options from "Coap") leaves it to code. Metadata for a type is looked for in
    /// <see cref="JsonTypeInfoResolver"/>, then in the options' own <see cref="JsonSerializerOptions.TypeInfoResolver"/>,
    /// then in what CoapNet's source generator wrote for the handlers' parameter and result types (so a trimmed or
    /// Native AOT server needs no context of its own), and last, where the runtime allows reflection (not under
    /// trimming or Native AOT), by reflection.
    /// </remarks>
    /// <param name="configure">Changes the options.</param>
    /// <returns>These options.</returns>
    /// <exception cref="InvalidOperationException">A handler was mapped with these options already: they are fixed then.</exception>
    public CoapHandlerOptions ConfigureJson(Action<JsonSerializerOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        if (Volatile.Read(ref _effective) is not null)
        {
            throw new InvalidOperationException("The JSON options are fixed once a handler is mapped with them: configure them before mapping.");
        }

        configure(_jsonOptions);
        return this;
    }

    /// <summary>
    /// Source-generated System.Text.Json metadata (a <see cref="JsonSerializerContext"/> with
    /// <c>[JsonSerializable(typeof(Lamp))]</c>, or several combined), asked first, for types CoapNet's source generator
    /// cannot describe (custom converters, polymorphism) when the server is trimmed or Native AOT; it is used with the
    /// options of <see cref="ConfigureJson"/>, so names follow those. Null: none.
    /// </summary>
    /// <remarks>An interface, so configuration binding (Hosting binds these options from "Coap") leaves it to code.</remarks>
    public IJsonTypeInfoResolver? JsonTypeInfoResolver
    {
        get => _json;
        set
        {
            _json = value;
            _effective = null;
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

    /// <summary>
    /// The options JSON is read and written with: a read-only copy of the configured ones whose metadata comes from the
    /// resolvers in the order <see cref="ConfigureJson"/> describes. Made once, at first use.
    /// </summary>
    internal JsonSerializerOptions Json
    {
        get
        {
            if (Volatile.Read(ref _effective) is { } effective)
            {
                return effective;
            }

            List<IJsonTypeInfoResolver> chain = [];
            if (_json is not null)
            {
                chain.Add(_json);
            }

            if (_jsonOptions.TypeInfoResolver is { } own)
            {
                chain.Add(own);
            }

            chain.Add(CoapJson.Generated);
            if (JsonSerializer.IsReflectionEnabledByDefault)
            {
                chain.Add(Reflection());
            }

            effective = new JsonSerializerOptions(_jsonOptions) { TypeInfoResolver = System.Text.Json.Serialization.Metadata.JsonTypeInfoResolver.Combine([.. chain]) };
            effective.MakeReadOnly();
            return Interlocked.CompareExchange(ref _effective, effective, null) ?? effective;
        }
    }

    /// <summary>The metadata of <paramref name="type"/>, or null when no resolver has any.</summary>
    internal JsonTypeInfo? GetJsonTypeInfo(Type type) => Json.TryGetTypeInfo(type, out JsonTypeInfo? info) ? info : null;

    internal void Validate()
    {
        if (DefaultContentFormat is not (CoapContentFormat.Cbor or CoapContentFormat.Json))
        {
            throw new ArgumentException($"Handlers.DefaultContentFormat is {DefaultContentFormat}; it must be 60 (application/cbor) or 50 (application/json).", nameof(DefaultContentFormat));
        }
    }

    // As ASP.NET Core's JsonOptions: reflection only where the runtime allows it. Trimming and Native AOT turn the
    // feature switch off, and the trimmer removes this call with the branch that makes it.
    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "Called only when JsonSerializer.IsReflectionEnabledByDefault, which trimming turns off.")]
    [UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Called only when JsonSerializer.IsReflectionEnabledByDefault, which Native AOT turns off.")]
    private static IJsonTypeInfoResolver Reflection() => new DefaultJsonTypeInfoResolver();
}
