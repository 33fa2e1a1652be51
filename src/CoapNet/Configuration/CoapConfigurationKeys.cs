using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using Microsoft.Extensions.Configuration;

namespace CoapNet.Configuration;

/// <summary>
/// The keys a configuration section may hold: settings (values), sections with keys of their own, and lists or maps whose
/// entries share one shape ("Coap:Endpoints:{name}"). <see cref="Check"/> finds every key of a section that is none of
/// them, so that a misspelled setting ("MaxPendingRequest") stops the start with its path and the nearest known name
/// instead of leaving the default in force without a word.
/// </summary>
/// <remarks>
/// Names compare without regard to case, as configuration keys do. A package that owns a section declares its keys with
/// this type and registers them (<see cref="CoapConfigurationSection"/>, <see cref="CoapEndpointConfigurationSection"/>),
/// so they are known once the package is added. Build it before it is checked; it is not meant to change afterwards.
/// </remarks>
/// <example>
/// <code>
/// new CoapConfigurationKeys("MaxSessions", "SessionIdleTimeout")
///     .AddList("PskKeys", new CoapConfigurationKeys("Identity", "Key", "KeyHex", "KeyFile"));
/// </code>
/// </example>
public sealed class CoapConfigurationKeys
{
    private readonly Dictionary<string, Key> _keys = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>Keys for settings named <paramref name="values"/>.</summary>
    /// <param name="values">The names of the section's values.</param>
    public CoapConfigurationKeys(params string[] values)
    {
        Add(values);
    }

    /// <summary>
    /// Keys for the settings of <typeparamref name="T"/> that configuration binds as values: each public property with a
    /// public setter whose type is text, a number, a <see cref="bool"/>, an enumeration, a <see cref="TimeSpan"/> or a
    /// nullable one of them, by its name or its <see cref="ConfigurationKeyNameAttribute"/>. Sections (an options object
    /// inside) and objects set in code (a clock, a logger, a certificate, a delegate) are not among them: add sections
    /// with <see cref="Add(string, CoapConfigurationKeys)"/>. Nor are bytes: they are keys and secrets, which the code
    /// that knows their form reads (text, hexadecimal, a file) and never quotes, where the binder would read base64 and
    /// quote a value it cannot.
    /// </summary>
    /// <typeparam name="T">The options type.</typeparam>
    /// <returns>New keys, the caller's to add to.</returns>
    /// <remarks>Reads the type's public properties once, when called (at start); trimming keeps them for this call.</remarks>
    public static CoapConfigurationKeys Of<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties)] T>()
    {
        CoapConfigurationKeys keys = new();
        foreach (PropertyInfo property in typeof(T).GetProperties(BindingFlags.Public | BindingFlags.Instance))
        {
            if (property.SetMethod is { IsPublic: true } && property.GetIndexParameters().Length == 0 && IsValue(property.PropertyType))
            {
                keys.Add(property.GetCustomAttribute<ConfigurationKeyNameAttribute>()?.Name ?? property.Name);
            }
        }

        return keys;
    }

    /// <summary>The names this section knows, in the order they were added.</summary>
    public IReadOnlyCollection<string> Names => _keys.Keys;

    /// <summary>Adds settings: keys that hold a value.</summary>
    /// <param name="values">Their names.</param>
    /// <returns>These keys.</returns>
    public CoapConfigurationKeys Add(params string[] values)
    {
        ArgumentNullException.ThrowIfNull(values);
        foreach (string name in values)
        {
            Put(name, new Key(KeyKind.Value, null, null));
        }

        return this;
    }

    /// <summary>
    /// Adds a section with keys of its own at <paramref name="path"/>, a name or a path of names below this section
    /// ("Client:Dtls"); a section already there gets <paramref name="keys"/>' keys added to its own.
    /// </summary>
    /// <param name="path">The name, or names separated by ':'.</param>
    /// <param name="keys">The section's keys.</param>
    /// <returns>These keys.</returns>
    public CoapConfigurationKeys Add(string path, CoapConfigurationKeys keys)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(keys);
        CoapConfigurationKeys parent = this;
        string[] names = path.Split(':');
        for (int i = 0; i < names.Length - 1; i++)
        {
            parent = parent._keys.TryGetValue(names[i], out Key? existing) && existing.Kind == KeyKind.Section
                ? existing.Keys!
                : throw new ArgumentException($"'{path}' goes through '{names[i]}', which is not a section of these keys.", nameof(path));
        }

        string last = names[^1];
        if (parent._keys.TryGetValue(last, out Key? present) && present.Kind == KeyKind.Section)
        {
            present.Keys!.Merge(keys);
        }
        else
        {
            parent.Put(last, new Key(KeyKind.Section, keys, null));
        }

        return this;
    }

    /// <summary>
    /// Adds a list or a map: a key whose entries, by index ("PskKeys:0") or by name ("Endpoints:secure"), each hold a value
    /// (when <paramref name="entries"/> is null) or a section with <paramref name="entries"/>' keys.
    /// </summary>
    /// <param name="name">The key.</param>
    /// <param name="entries">The keys of each entry; null when each entry is a value.</param>
    /// <returns>These keys.</returns>
    public CoapConfigurationKeys AddList(string name, CoapConfigurationKeys? entries = null)
    {
        Put(name, new Key(KeyKind.List, entries, null));
        return this;
    }

    /// <summary>
    /// Adds a key that is no longer a setting, with what to use instead: its presence is refused with
    /// <paramref name="instead"/>, so configuration written for an earlier version says how to move rather than how to spell.
    /// </summary>
    /// <param name="name">The former key.</param>
    /// <param name="instead">A sentence: where its setting went.</param>
    /// <returns>These keys.</returns>
    public CoapConfigurationKeys AddRetired(string name, string instead)
    {
        ArgumentException.ThrowIfNullOrEmpty(instead);
        Put(name, new Key(KeyKind.Retired, null, instead));
        return this;
    }

    /// <summary>
    /// Finds what <paramref name="section"/> holds that these keys do not allow, at any depth: an unknown key (with the
    /// nearest known name when one is close), a retired one (with where it went), a section where a value belongs or a
    /// value where a section does. Values are not read, so nothing secret is ever quoted.
    /// </summary>
    /// <param name="section">The section to check, such as "Coap".</param>
    /// <param name="problems">Gets one sentence per problem, each naming the key's full path.</param>
    public void Check(IConfiguration section, ICollection<string> problems)
    {
        ArgumentNullException.ThrowIfNull(section);
        ArgumentNullException.ThrowIfNull(problems);
        string path = section is IConfigurationSection named ? named.Path : string.Empty;
        foreach (IConfigurationSection child in section.GetChildren())
        {
            if (!_keys.TryGetValue(child.Key, out Key? key))
            {
                problems.Add(Unknown(path, child.Key));
                continue;
            }

            CheckKey(key, child, problems);
        }
    }

    private static void CheckKey(Key key, IConfigurationSection child, ICollection<string> problems)
    {
        bool hasChildren = child.GetChildren().Any();
        switch (key.Kind)
        {
            case KeyKind.Retired:
                problems.Add($"{child.Path} is no longer a setting: {key.Instead}");
                break;
            case KeyKind.Value when hasChildren:
                problems.Add($"{child.Path} is a value, not a section: it takes no keys below it.");
                break;
            case KeyKind.Section when child.Value is { Length: > 0 }:
                problems.Add($"{child.Path} is a section, not a value: it takes keys such as {string.Join(", ", key.Keys!.Names.Take(4))}.");
                break;
            case KeyKind.Section:
                key.Keys!.Check(child, problems);
                break;
            case KeyKind.List:
                foreach (IConfigurationSection entry in child.GetChildren())
                {
                    if (key.Keys is null)
                    {
                        if (entry.GetChildren().Any())
                        {
                            problems.Add($"{entry.Path} is a value, not a section: each entry of {child.Path} is one value.");
                        }
                    }
                    else if (entry.Value is { Length: > 0 })
                    {
                        problems.Add($"{entry.Path} is a section, not a value: each entry of {child.Path} takes keys such as {string.Join(", ", key.Keys.Names.Take(4))}.");
                    }
                    else
                    {
                        key.Keys.Check(entry, problems);
                    }
                }

                break;
        }
    }

    /// <summary>The name of these keys nearest to <paramref name="name"/>, when it is near enough to be a misspelling of it; null otherwise.</summary>
    /// <param name="name">A name that is not one of these keys.</param>
    /// <returns>The nearest name, or null.</returns>
    public string? Nearest(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        string? best = null;
        int bestDistance = int.MaxValue;
        foreach (KeyValuePair<string, Key> known in _keys)
        {
            if (known.Value.Kind == KeyKind.Retired)
            {
                continue;
            }

            // A third of the name's letters (at least two) may differ: "MaxPendingRequest" is MaxPendingRequests, "Tls" is
            // not Udp. A name that begins a known one, or that a known one begins, is near it too, whatever its length:
            // "Certificate" is CertificateFile, "PskKeyBytes" is PskKey.
            int distance = Distance(name, known.Key);
            bool near = (distance <= Math.Max(2, name.Length / 3) && distance < Math.Max(name.Length, known.Key.Length))
                || (name.Length >= 3 && known.Key.StartsWith(name, StringComparison.OrdinalIgnoreCase))
                || (known.Key.Length >= 3 && name.StartsWith(known.Key, StringComparison.OrdinalIgnoreCase));
            if (near && distance < bestDistance)
            {
                best = known.Key;
                bestDistance = distance;
            }
        }

        return best;
    }

    private string Unknown(string path, string name)
    {
        string full = path.Length == 0 ? name : path + ":" + name;
        return Nearest(name) is { } nearest
            ? $"{full} is not a setting; did you mean {nearest}?"
            : $"{full} is not a setting; {(path.Length == 0 ? "this section" : path)} takes {string.Join(", ", NamesInUse())}.";
    }

    private IEnumerable<string> NamesInUse()
    {
        foreach (KeyValuePair<string, Key> known in _keys)
        {
            if (known.Value.Kind != KeyKind.Retired)
            {
                yield return known.Key;
            }
        }
    }

    private void Merge(CoapConfigurationKeys other)
    {
        foreach (KeyValuePair<string, Key> key in other._keys)
        {
            if (key.Value.Kind == KeyKind.Section && _keys.TryGetValue(key.Key, out Key? mine) && mine.Kind == KeyKind.Section)
            {
                mine.Keys!.Merge(key.Value.Keys!);
            }
            else
            {
                _keys[key.Key] = key.Value;
            }
        }
    }

    private void Put(string name, Key key)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        if (name.Contains(':', StringComparison.Ordinal))
        {
            throw new ArgumentException($"'{name}' is a path; add a section for each of its names.", nameof(name));
        }

        _keys[name] = key;
    }

    // What the binder converts from one string: the types of values, as opposed to sections and objects set in code.
    private static bool IsValue(Type type)
    {
        Type value = Nullable.GetUnderlyingType(type) ?? type;
        return value.IsPrimitive || value.IsEnum || value == typeof(string) || value == typeof(decimal) || value == typeof(TimeSpan)
            || value == typeof(DateTime) || value == typeof(DateTimeOffset) || value == typeof(Guid) || value == typeof(Uri);
    }

    // The edit distance, letters compared without regard to case (Levenshtein, two rows).
    private static int Distance(string a, string b)
    {
        int[] previous = new int[b.Length + 1];
        int[] current = new int[b.Length + 1];
        for (int j = 0; j <= b.Length; j++)
        {
            previous[j] = j;
        }

        for (int i = 1; i <= a.Length; i++)
        {
            current[0] = i;
            for (int j = 1; j <= b.Length; j++)
            {
                int substitution = char.ToUpperInvariant(a[i - 1]) == char.ToUpperInvariant(b[j - 1]) ? 0 : 1;
                current[j] = Math.Min(Math.Min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + substitution);
            }

            (previous, current) = (current, previous);
        }

        return previous[b.Length];
    }

    private enum KeyKind
    {
        Value,
        Section,
        List,
        Retired,
    }

    private sealed record Key(KeyKind Kind, CoapConfigurationKeys? Keys, string? Instead);
}
