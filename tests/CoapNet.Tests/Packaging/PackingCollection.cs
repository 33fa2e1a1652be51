namespace CoapNet.Tests.Packaging;

/// <summary>
/// The tests that pack the library in the repository's Release output run one at a time, and share one packing
/// (<see cref="PackedPackages"/>): two packs of one project at once would write the same files.
/// </summary>
[CollectionDefinition(Name)]
public sealed class PackingCollection : ICollectionFixture<PackedPackages>
{
    /// <summary>The collection's name.</summary>
    public const string Name = "Packing";
}
