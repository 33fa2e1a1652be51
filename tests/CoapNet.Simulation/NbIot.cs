namespace CoapNet.Simulation;

/// <summary>
/// The emulated NB-IoT link of seed 002 (section 4.2, tables 4 and 5): downlink 30 kbit/s and 400 ms one way, uplink
/// 60 kbit/s and 200 ms, MTU 296 bytes, 10-20 ms of random extra delay for the rest of the path, a 2,500-byte bottleneck
/// buffer, and four loss profiles applied to both directions.
/// </summary>
/// <remarks>
/// What the seed does not state is a parameter here: how long the bursty profiles stay in their bad state
/// (<c>meanBadRun</c>, in packets of one direction; "alternates in suitably short intervals"), and whether the random
/// extra delay is drawn per packet (it is here, uniform).
/// </remarks>
public static class NbIot
{
    /// <summary>The loss profiles' names, in the seed's order.</summary>
    public static IReadOnlyList<string> LossProfiles { get; } = ["none", "low", "medium", "high"];

    /// <summary>The server-to-client direction with <paramref name="loss"/>.</summary>
    /// <param name="loss">The loss model (see <see cref="Loss"/>).</param>
    /// <param name="bufferBytes">The bottleneck buffer (default 2,500 bytes, about the link's bandwidth-delay product).</param>
    /// <returns>The profile.</returns>
    public static LinkProfile Downlink(GilbertElliott loss, long bufferBytes = 2500) => Direction(30_000, TimeSpan.FromMilliseconds(400), loss, bufferBytes);

    /// <summary>The client-to-server direction with <paramref name="loss"/>.</summary>
    /// <param name="loss">The loss model (see <see cref="Loss"/>).</param>
    /// <param name="bufferBytes">The bottleneck buffer (default 2,500 bytes).</param>
    /// <returns>The profile.</returns>
    public static LinkProfile Uplink(GilbertElliott loss, long bufferBytes = 2500) => Direction(60_000, TimeSpan.FromMilliseconds(200), loss, bufferBytes);

    /// <summary>
    /// A loss profile of table 5: "none"; "low", a constant 2 %; "medium", 10 % on average alternating between 0 % and
    /// 50 %; "high", 18 % on average alternating between 2 % and 80 %.
    /// </summary>
    /// <param name="profile">The profile's name.</param>
    /// <param name="meanBadRun">How many packets a stay in the bad state lasts on average, for the two alternating profiles.</param>
    /// <returns>The loss model.</returns>
    /// <exception cref="ArgumentException">The name is none of <see cref="LossProfiles"/>.</exception>
    public static GilbertElliott Loss(string profile, double meanBadRun) => profile switch
    {
        "none" => GilbertElliott.None,
        "low" => GilbertElliott.Constant(0.02),
        "medium" => GilbertElliott.Alternating(0, 0.5, 0.10, meanBadRun),
        "high" => GilbertElliott.Alternating(0.02, 0.8, 0.18, meanBadRun),
        _ => throw new ArgumentException($"Unknown loss profile '{profile}'; the seed's are none, low, medium and high.", nameof(profile)),
    };

    private static LinkProfile Direction(double bitsPerSecond, TimeSpan delay, GilbertElliott loss, long bufferBytes) => new()
    {
        BitsPerSecond = bitsPerSecond,
        Delay = delay,
        ExtraDelayMin = TimeSpan.FromMilliseconds(10),
        ExtraDelayMax = TimeSpan.FromMilliseconds(20),
        Mtu = 296,
        BufferBytes = bufferBytes,
        Loss = loss,
    };
}
