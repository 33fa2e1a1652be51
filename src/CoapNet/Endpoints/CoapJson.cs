using System.Collections.Concurrent;
using System.ComponentModel;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace CoapNet.Endpoints;

/// <summary>
/// The System.Text.Json metadata CoapNet's source generator writes for the types mapped handlers read and return (as
/// ASP.NET Core's request delegate generator relies on for Native AOT, but written by the generator itself, so the
/// application needs no <c>JsonSerializerContext</c>): plain <see cref="JsonMetadataServices"/> calls, no reflection.
/// The options of <see cref="CoapHandlerOptions.ConfigureJson"/> ask it after the application's own resolvers. For generated
/// code; an application adds metadata of its own through <see cref="CoapHandlerOptions.JsonTypeInfoResolver"/>.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public static class CoapJson
{
    private static readonly ConcurrentDictionary<Type, Func<JsonSerializerOptions, JsonTypeInfo>> Factories = new();

    /// <summary>The resolver over what was registered: the metadata of a registered type, made for the options that ask.</summary>
    internal static IJsonTypeInfoResolver Generated { get; } = new Resolver();

    /// <summary>Registers (or replaces) how the metadata of <typeparamref name="T"/> is made for a set of options.</summary>
    /// <typeparam name="T">The type.</typeparam>
    /// <param name="typeInfo">Makes the metadata for the options given; System.Text.Json calls it once per options and caches the result.</param>
    public static void Register<T>(Func<JsonSerializerOptions, JsonTypeInfo<T>> typeInfo)
    {
        ArgumentNullException.ThrowIfNull(typeInfo);
        Factories[typeof(T)] = typeInfo;
    }

    private sealed class Resolver : IJsonTypeInfoResolver
    {
        public JsonTypeInfo? GetTypeInfo(Type type, JsonSerializerOptions options)
            => Factories.TryGetValue(type, out Func<JsonSerializerOptions, JsonTypeInfo>? make) ? make(options) : null;
    }
}
