namespace CoapNet.Simulation;

/// <summary>
/// Two-state (Gilbert-Elliott) packet loss, as netem's <c>loss gemodel p r 1-h 1-k</c> draws it: a Markov chain over the
/// packets of one direction, each packet lost with its state's probability, then the chain moves on (good to bad with
/// <see cref="GoodToBad"/>, bad to good with <see cref="BadToGood"/>). A constant loss rate is the chain that never
/// leaves the good state.
/// </summary>
/// <param name="GoodToBad">p: the probability of moving from the good state to the bad one after a packet.</param>
/// <param name="BadToGood">r: the probability of moving from the bad state to the good one after a packet.</param>
/// <param name="GoodLoss">1 - k: the loss probability in the good state.</param>
/// <param name="BadLoss">1 - h: the loss probability in the bad state.</param>
public sealed record GilbertElliott(double GoodToBad, double BadToGood, double GoodLoss, double BadLoss)
{
    /// <summary>No loss at all.</summary>
    public static GilbertElliott None { get; } = Constant(0);

    /// <summary>The share of packets in the bad state in the long run: p / (p + r).</summary>
    public double BadShare => GoodToBad + BadToGood == 0 ? 0 : GoodToBad / (GoodToBad + BadToGood);

    /// <summary>The long-run loss rate: the states' loss rates weighted by the time spent in each.</summary>
    public double AverageLoss => ((1 - BadShare) * GoodLoss) + (BadShare * BadLoss);

    /// <summary>How many packets a stay in the bad state lasts on average (1 / r), or 0 when the state is never entered.</summary>
    public double MeanBadRun => GoodToBad == 0 ? 0 : 1 / BadToGood;

    /// <summary>Every packet lost with the same probability, independently.</summary>
    /// <param name="loss">The probability, 0 to 1.</param>
    /// <returns>The model.</returns>
    public static GilbertElliott Constant(double loss) => new(0, 1, loss, 0);

    /// <summary>
    /// Alternates between a good state losing <paramref name="goodLoss"/> and a bad one losing <paramref name="badLoss"/>,
    /// spending as long in each as makes the average <paramref name="averageLoss"/>, with stays in the bad state
    /// <paramref name="meanBadRun"/> packets long on average.
    /// </summary>
    /// <param name="goodLoss">The loss probability in the good state.</param>
    /// <param name="badLoss">The loss probability in the bad state, above <paramref name="goodLoss"/>.</param>
    /// <param name="averageLoss">The long-run loss rate, between the two.</param>
    /// <param name="meanBadRun">The average stay in the bad state, in packets (at least 1).</param>
    /// <returns>The model.</returns>
    /// <exception cref="ArgumentException">The rates are not ordered good, average, bad, or the run is under 1 packet.</exception>
    public static GilbertElliott Alternating(double goodLoss, double badLoss, double averageLoss, double meanBadRun)
    {
        if (!(goodLoss >= 0 && goodLoss < averageLoss && averageLoss < badLoss && badLoss <= 1))
        {
            throw new ArgumentException($"The loss rates must satisfy 0 <= good ({goodLoss}) < average ({averageLoss}) < bad ({badLoss}) <= 1.", nameof(averageLoss));
        }

        if (!(meanBadRun >= 1))
        {
            throw new ArgumentException($"The mean stay in the bad state is at least one packet, not {meanBadRun}.", nameof(meanBadRun));
        }

        double badShare = (averageLoss - goodLoss) / (badLoss - goodLoss);
        double badToGood = 1 / meanBadRun;
        return new GilbertElliott(badToGood * badShare / (1 - badShare), badToGood, goodLoss, badLoss);
    }

    /// <summary>Checks the probabilities.</summary>
    /// <exception cref="ArgumentException">One is outside [0, 1], or the chain could never leave the bad state.</exception>
    public void Validate()
    {
        foreach (double probability in (ReadOnlySpan<double>)[GoodToBad, BadToGood, GoodLoss, BadLoss])
        {
            if (!(probability is >= 0 and <= 1))
            {
                throw new ArgumentException($"Every probability of the loss model is from 0 to 1: {this}.", nameof(GilbertElliott));
            }
        }

        if (GoodToBad > 0 && BadToGood == 0)
        {
            throw new ArgumentException("A loss model that enters the bad state must be able to leave it (BadToGood > 0).", nameof(BadToGood));
        }
    }
}
