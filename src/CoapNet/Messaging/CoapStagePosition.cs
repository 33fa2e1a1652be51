namespace CoapNet.Messaging;

/// <summary>
/// Where <see cref="CoapEndpointOptions.UseStage"/> puts a stage in the chain, which runs from the application down to the
/// wire: above every stage, below every stage, or just above or below a named one (a built-in's,
/// <see cref="CoapStageNames"/>, or one added before). Stages added at the same place keep the order they were added in,
/// from the application down.
/// </summary>
/// <remarks>
/// Above sees a server's request after, and its response before, the stages below; a client's request before and its
/// response after. A stage above block-wise sees whole bodies; one below it, every block. OSCORE (RFC 8613) sits below
/// Observe and between an inner block-wise stage and an outer one (section 4.1.3.4).
/// </remarks>
public sealed class CoapStagePosition
{
    private CoapStagePosition(Placement placement, string? anchor)
    {
        Where = placement;
        Anchor = anchor;
    }

    /// <summary>Above every stage, nearest the application: it sees whole requests and responses as the handler or caller does.</summary>
    public static CoapStagePosition AboveAll { get; } = new(Placement.AboveAll, null);

    /// <summary>Below every stage, nearest the wire: it sees every message as it is sent or received, each block and follow-up.</summary>
    public static CoapStagePosition BelowAll { get; } = new(Placement.BelowAll, null);

    /// <summary>The stage named <see cref="Anchor"/>, when placed relative to one; null otherwise.</summary>
    public string? Anchor { get; }

    internal Placement Where { get; }

    /// <summary>Just above the stage named <paramref name="name"/>, nearer the application.</summary>
    /// <param name="name">A built-in's name (<see cref="CoapStageNames"/>) or one added before.</param>
    /// <returns>The position.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is null or blank.</exception>
    public static CoapStagePosition Above(string name) => new(Placement.Above, CheckName(name));

    /// <summary>Just below the stage named <paramref name="name"/>, nearer the wire.</summary>
    /// <param name="name">A built-in's name (<see cref="CoapStageNames"/>) or one added before.</param>
    /// <returns>The position.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is null or blank.</exception>
    public static CoapStagePosition Below(string name) => new(Placement.Below, CheckName(name));

    /// <summary>"above all", "below all", "above Observe", "below Blockwise".</summary>
    /// <returns>The position in words.</returns>
    public override string ToString() => Where switch
    {
        Placement.AboveAll => "above all",
        Placement.BelowAll => "below all",
        Placement.Above => "above " + Anchor,
        _ => "below " + Anchor,
    };

    internal static string CheckName(string name, string parameter = "name")
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name, parameter);
        return name;
    }

    internal enum Placement
    {
        AboveAll,
        BelowAll,
        Above,
        Below,
    }
}
