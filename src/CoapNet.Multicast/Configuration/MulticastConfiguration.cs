using System.Net;
using CoapNet.Configuration;
using Microsoft.Extensions.Configuration;

namespace CoapNet.Multicast.Configuration;

/// <summary>
/// Reads <see cref="CoapMulticastOptions"/> from configuration ("Coap:Multicast"): the settings by the options' own
/// names, bound by the configuration binder ("Port", "Leisure", "GroupSizeEstimate", "EstimatedResponseSize",
/// "DataRate", "RequestsPerSecond", "Burst", "MaxTrackedSources"), the interfaces as a list of names, and the groups as a
/// list of multicast addresses, which replaces All CoAP Nodes when given. A key the section does not know is refused with
/// its path and the nearest known name.
/// </summary>
/// <example>
/// <code>
/// "Coap": {
///   "Multicast": {
///     "Groups": [ "224.0.1.187", "ff02::fd", "ff05::fd", "239.1.2.3" ],
///     "Interfaces": [ "eth0" ],
///     "Leisure": "00:00:02",
///     "RequestsPerSecond": 2, "Burst": 4, "MaxTrackedSources": 4096
///   }
/// }
/// </code>
/// </example>
public static class MulticastConfiguration
{
    /// <summary>The section the options are read from.</summary>
    public const string Section = "Coap:Multicast";

    /// <summary>
    /// The keys "Coap:Multicast" may hold: the settings of <see cref="CoapMulticastOptions"/> that take a value, and the
    /// lists "Groups" (addresses) and "Interfaces" (names).
    /// </summary>
    /// <returns>New keys, the caller's.</returns>
    public static CoapConfigurationKeys Keys()
        => CoapConfigurationKeys.Of<CoapMulticastOptions>()
            .AddList(nameof(CoapMulticastOptions.Groups))
            .AddList(nameof(CoapMulticastOptions.Interfaces));

    /// <summary>
    /// Fills <paramref name="options"/> from <paramref name="section"/> (see <see cref="Keys"/>); settings the section does
    /// not name are left as they are, and "Groups", when present, replaces the groups. Values are checked when the options
    /// are used (<see cref="CoapMulticastServerExtensions.ListenMulticast"/>).
    /// </summary>
    /// <param name="options">The options to fill.</param>
    /// <param name="section">The section ("Coap:Multicast").</param>
    /// <exception cref="CoapConfigurationException">The section holds a key that is not a setting; the message names it.</exception>
    /// <exception cref="FormatException">A group is not an IP address; the message names its path.</exception>
    /// <exception cref="InvalidOperationException">A setting's value is not of its type; the message names its path.</exception>
    public static void ReadOptions(CoapMulticastOptions options, IConfiguration section)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(section);
        Refuse(section);

        // The binder appends "Interfaces" to the list (empty unless code filled it); "Groups" are addresses, which it
        // cannot make, so they are read here.
        section.Bind(options);
        List<IPAddress> groups = [];
        foreach (IConfigurationSection entry in section.GetSection(nameof(CoapMulticastOptions.Groups)).GetChildren())
        {
            groups.Add(IPAddress.TryParse(entry.Value?.Trim(), out IPAddress? group)
                ? group
                : throw new FormatException($"{entry.Path} is '{entry.Value}', which is not an IP address; a group is a multicast address such as 224.0.1.187 or ff02::fd."));
        }

        if (groups.Count > 0)
        {
            options.Groups.Clear();
            foreach (IPAddress group in groups)
            {
                options.Groups.Add(group);
            }
        }
    }

    // Checked before anything binds: the binder would leave a misspelled setting's default in force without a word.
    private static void Refuse(IConfiguration section)
    {
        List<string> problems = [];
        Keys().Check(section, problems);
        if (problems.Count > 0)
        {
            throw new CoapConfigurationException(problems);
        }
    }
}
