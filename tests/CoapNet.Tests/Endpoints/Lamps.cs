using System.Text.Json;
using System.Text.Json.Serialization;

namespace CoapNet.Tests.Endpoints;

/// <summary>A resource's representation, as a record with a primary constructor (read back through it).</summary>
public sealed record Lamp(int Id, string Name, bool On, double Brightness);

/// <summary>A representation read back through settable properties, with a renamed and an ignored member.</summary>
public sealed class LampPatch
{
    [JsonPropertyName("name")]
    public string? Name { get; set; }

    public bool? On { get; set; }

    public List<string> Tags { get; set; } = [];

    [JsonIgnore]
    public string Secret { get; set; } = "kept";
}

/// <summary>An order whose name C# requires and whose level is init-only: JSON without the name does not bind.</summary>
public sealed class LampOrder
{
    public required string Name { get; set; }

    public int? Level { get; init; } = 50;

    public LampColor Color { get; set; }
}

/// <summary>
/// A record read through its primary constructor whose init-only members have initializers, one reading the
/// constructor's parameter: a payload without them keeps those values, whatever it has of the others.
/// </summary>
public sealed record LampTimer(string Lamp, int Minutes)
{
    public int WarnAt { get; init; } = Minutes - 1;

    public string Sound { get; init; } = "chime";
}

/// <summary>A struct read through its parameterless constructor, which runs the initializers (default(LampDim) would not).</summary>
public readonly record struct LampDim
{
    public LampDim()
    {
    }

    public int Level { get; init; }

    public int Steps { get; init; } = 4;
}

/// <summary>A type that only a CoapResults.Content call names: the generator finds it there.</summary>
public sealed record LampOwner(string Name, int Lamps);

/// <summary>A recursive type, read by generated code that recurses per level.</summary>
public sealed class Tree
{
    public List<Tree> Children { get; set; } = [];

    public int Depth() => 1 + (Children.Count == 0 ? 0 : Children.Max(child => child.Depth()));
}

/// <summary>The kinds a route or query value binds to by name.</summary>
public enum LampColor
{
    White,
    Warm,
    Red,
}

/// <summary>A service the handlers ask for: scoped, so each request gets its own and it is disposed after.</summary>
public sealed class LampStore : IDisposable
{
    private readonly Dictionary<int, Lamp> _lamps;

    public LampStore(LampStoreData data)
    {
        _lamps = data.Lamps;
        data.Created++;
        Data = data;
    }

    public LampStoreData Data { get; }

    public Lamp? Find(int id) => _lamps.TryGetValue(id, out Lamp? lamp) ? lamp : null;

    public void Save(Lamp lamp) => _lamps[lamp.Id] = lamp;

    public void Dispose() => Data.Disposed++;
}

/// <summary>What the scoped stores share, a singleton: the lamps, and how many stores were made and disposed.</summary>
public sealed class LampStoreData
{
    public Dictionary<int, Lamp> Lamps { get; } = new() { [1] = new Lamp(1, "desk", true, 0.5) };

    public int Created { get; set; }

    public int Disposed { get; set; }
}

/// <summary>
/// How the tests read and write JSON as a client would, with the web defaults the server uses (camelCase, names matched
/// without regard to case); source-generated, as an AOT application's context would be.
/// </summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(Lamp))]
[JsonSerializable(typeof(LampPatch))]
[JsonSerializable(typeof(List<Lamp>))]
[JsonSerializable(typeof(Lamp[]))]
internal sealed partial class EndpointJsonContext : JsonSerializerContext
{
}

/// <summary>An application's context made with System.Text.Json's own defaults (PascalCase), as the user had.</summary>
[JsonSerializable(typeof(Lamp))]
internal sealed partial class PascalJsonContext : JsonSerializerContext
{
}
