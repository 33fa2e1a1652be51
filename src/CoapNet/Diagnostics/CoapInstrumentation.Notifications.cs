using System.Diagnostics.Metrics;

namespace CoapNet.Diagnostics;

// What a server's observations report (RFC 7641): notifications sent, and how long after the change each one left.
// Measured where the notification passes the Observe stage on its way down, once per notification, never per request.
public static partial class CoapInstrumentation
{
    /// <summary>Counter: notifications a server sent to its observers (RFC 7641 section 4.2), tagged <c>url.scheme</c>.</summary>
    public const string NotificationsSent = "coap.server.notifications";

    /// <summary>
    /// Histogram (seconds, with <see cref="DurationBuckets"/> as advice): from the change that called for a notification
    /// (<c>NotifyObservers</c>) to the notification going down to the transport, tagged <c>url.scheme</c>. A change made
    /// while the observer's previous notification is still under way (RFC 7641 section 4.5.2: one at a time, with the
    /// latest state) is measured from that change to the notification that carries it.
    /// </summary>
    public const string NotificationLag = "coap.server.notification.lag";

    internal static readonly Counter<long> NotificationCounter = Meter.CreateCounter<long>(NotificationsSent, "{notification}", "Notifications sent to observers");
    internal static readonly Histogram<double> NotificationLagHistogram = Meter.CreateHistogram(NotificationLag, "s", "Time from a resource's change to its notification's send", tags: null, new InstrumentAdvice<double> { HistogramBucketBoundaries = DurationBuckets });

    /// <summary>True when a listener wants the notification lag, so a change reads the clock.</summary>
    internal static bool MeasuresNotificationLag => NotificationLagHistogram.Enabled;

    /// <summary>Counts a notification sent to a peer of <paramref name="scheme"/>, and its lag when known.</summary>
    /// <param name="scheme">The observer's URI scheme.</param>
    /// <param name="lag">From the change to now, or null when the change was not timed (nobody listened then).</param>
    internal static void RecordNotification(string scheme, TimeSpan? lag)
    {
        KeyValuePair<string, object?> tag = new("url.scheme", scheme);
        if (NotificationCounter.Enabled)
        {
            NotificationCounter.Add(1, tag);
        }

        if (lag is { } elapsed && NotificationLagHistogram.Enabled)
        {
            NotificationLagHistogram.Record(elapsed.TotalSeconds, tag);
        }
    }
}
