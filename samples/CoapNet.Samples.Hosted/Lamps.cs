using System.Collections.Concurrent;
using System.Text.Json.Serialization;

namespace CoapNet.Samples.Hosted;

/// <summary>A lamp, as the /lamps resources represent it in CBOR (a map of these properties) or JSON.</summary>
/// <param name="Id">Its number.</param>
/// <param name="Name">Where it is.</param>
/// <param name="On">Whether it is lit.</param>
/// <param name="Brightness">From 0 to 1.</param>
public sealed record Lamp(int Id, string Name, bool On, double Brightness);

/// <summary>The lamps, a singleton service the handlers are given.</summary>
public sealed class LampStore
{
    private readonly ConcurrentDictionary<int, Lamp> _lamps = new()
    {
        [1] = new Lamp(1, "desk", true, 0.8),
        [2] = new Lamp(2, "hall", false, 0),
    };

    /// <summary>Every lamp, by number.</summary>
    /// <returns>The lamps.</returns>
    public Lamp[] All() => [.. _lamps.Values.OrderBy(lamp => lamp.Id)];

    /// <summary>A lamp by number.</summary>
    /// <param name="id">The number.</param>
    /// <returns>The lamp, or null.</returns>
    public Lamp? Find(int id) => _lamps.TryGetValue(id, out Lamp? lamp) ? lamp : null;

    /// <summary>Stores a lamp; true when it replaced one.</summary>
    /// <param name="lamp">The lamp.</param>
    /// <returns>True when a lamp of that number existed.</returns>
    public bool Save(Lamp lamp)
    {
        bool existed = _lamps.ContainsKey(lamp.Id);
        _lamps[lamp.Id] = lamp;
        return existed;
    }
}

/// <summary>The JSON metadata of the sample's types, source-generated so the Native AOT build keeps it.</summary>
[JsonSerializable(typeof(Lamp))]
[JsonSerializable(typeof(Lamp[]))]
internal sealed partial class SampleJson : JsonSerializerContext
{
}
