using CoapNet.Observe;

namespace CoapNet.Hosting;

/// <summary>
/// Observe settings (RFC 7641) bound from configuration ("Coap:Observe:MaxObservations", ...); any left
/// out keep <see cref="ObserveOptions"/>' defaults.
/// </summary>
public sealed class CoapObserveSettings
{
    /// <summary>See <see cref="ObserveOptions.MaxObservations"/>.</summary>
    public int? MaxObservations { get; set; }

    /// <summary>See <see cref="ObserveOptions.MaxObservationsPerPeer"/>.</summary>
    public int? MaxObservationsPerPeer { get; set; }

    /// <summary>See <see cref="ObserveOptions.ConfirmableInterval"/>, such as "1.00:00:00".</summary>
    public TimeSpan? ConfirmableInterval { get; set; }

    /// <summary>See <see cref="ObserveOptions.ConfirmableEvery"/>.</summary>
    public int? ConfirmableEvery { get; set; }

    /// <summary>See <see cref="ObserveOptions.ConfirmableNotifications"/>.</summary>
    public bool? ConfirmableNotifications { get; set; }

    /// <summary>The options with every value set here replacing the default's.</summary>
    /// <returns>The options.</returns>
    public ObserveOptions ToOptions()
    {
        ObserveOptions defaults = new();
        return new ObserveOptions
        {
            MaxObservations = MaxObservations ?? defaults.MaxObservations,
            MaxObservationsPerPeer = MaxObservationsPerPeer ?? defaults.MaxObservationsPerPeer,
            ConfirmableInterval = ConfirmableInterval ?? defaults.ConfirmableInterval,
            ConfirmableEvery = ConfirmableEvery ?? defaults.ConfirmableEvery,
            ConfirmableNotifications = ConfirmableNotifications ?? defaults.ConfirmableNotifications,
        };
    }
}
