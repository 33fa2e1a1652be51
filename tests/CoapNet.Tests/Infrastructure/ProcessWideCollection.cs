namespace CoapNet.Tests.Infrastructure;

/// <summary>
/// Test classes that read process-wide state run here: after the parallel ones and one class at a time, since a class
/// running beside them would add to what they read. The CoapNet meter and activity source are process-wide, and so is
/// <see cref="GC.GetTotalMemory(bool)"/> (a CI run once counted 9.6 MB that another class held beside the spoofed-hello flood).
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ProcessWideCollection
{
    /// <summary>The collection's name, for <see cref="CollectionAttribute"/>.</summary>
    public const string Name = "Process-wide state";
}
