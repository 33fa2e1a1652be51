using System.Collections;
using System.Text;

namespace CoapNet.Messages;

/// <summary>
/// The options of a message, always kept in ascending option-number order (the order the
/// delta encoding of RFC 7252 section 3.1 needs); options with the same number keep the order
/// in which they were added, which is significant for repeatable options such as Uri-Path.
/// </summary>
/// <remarks>
/// A parsed message with many options keeps them in a compact, chunked table over its bytes, so parsing
/// stays off the Large Object Heap. Lookups, the indexer and <c>foreach</c> read that table directly;
/// the first change, <see cref="AsSpan"/> or <see cref="GetAll"/> turns it into one array of entries.
/// </remarks>
public sealed class CoapOptionCollection : IReadOnlyList<CoapOptionEntry>
{
    private CoapOptionEntry[] _items;
    private int _count;

    // Non-null while the options are still the parser's compact table (then _items is empty).
    private CoapOptionTable? _table;

    /// <summary>Creates an empty collection.</summary>
    public CoapOptionCollection() => _items = [];

    // The parser hands over an exactly sized, already ordered array.
    internal CoapOptionCollection(CoapOptionEntry[] items)
    {
        _items = items;
        _count = items.Length;
    }

    // The parser hands over a compact table for messages with many options.
    internal CoapOptionCollection(CoapOptionTable table)
    {
        _items = [];
        _table = table;
        _count = table.Count;
    }

    /// <summary>The number of options.</summary>
    public int Count => _count;

    /// <summary>The option at <paramref name="index"/>, in wire order.</summary>
    /// <param name="index">The position, from 0 to <see cref="Count"/> - 1.</param>
    /// <exception cref="ArgumentOutOfRangeException">The index is out of range.</exception>
    public CoapOptionEntry this[int index]
    {
        get
        {
            if ((uint)index >= (uint)_count)
            {
                throw new ArgumentOutOfRangeException(nameof(index), index, $"The collection holds {_count} options.");
            }

            return EntryAt(index);
        }
    }

    /// <summary>The options as a span, in wire order.</summary>
    /// <remarks>On a parsed message with thousands of options this builds the entry array once; <c>foreach</c> and the indexer do not.</remarks>
    public ReadOnlySpan<CoapOptionEntry> AsSpan()
    {
        Materialize();
        return new(_items, 0, _count);
    }

    /// <summary>Adds an option with an encoded value, after any options with the same number.</summary>
    /// <param name="number">The option number.</param>
    /// <param name="value">The encoded value, at most 65804 bytes.</param>
    /// <exception cref="ArgumentException">The value is too long for the option encoding.</exception>
    public void Add(CoapOptionNumber number, ReadOnlyMemory<byte> value) => Insert(new CoapOptionEntry(number, value));

    /// <summary>Adds a string option, encoded as UTF-8.</summary>
    /// <param name="number">The option number.</param>
    /// <param name="value">The string value.</param>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is null.</exception>
    public void Add(CoapOptionNumber number, string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        Add(number, Encoding.UTF8.GetBytes(value));
    }

    /// <summary>Adds an unsigned integer option in its shortest encoding (RFC 7252 section 3.2).</summary>
    /// <param name="number">The option number.</param>
    /// <param name="value">The value.</param>
    public void Add(CoapOptionNumber number, uint value) => Insert(new CoapOptionEntry(UIntCodec.Encode(value), number));

    /// <summary>Adds an option with an empty value, such as If-None-Match.</summary>
    /// <param name="number">The option number.</param>
    public void AddEmpty(CoapOptionNumber number) => Insert(new CoapOptionEntry(ReadOnlyMemory<byte>.Empty, number));

    /// <summary>Adds a typed option.</summary>
    /// <param name="option">The option.</param>
    /// <exception cref="ArgumentNullException"><paramref name="option"/> is null.</exception>
    public void Add(CoapOption option)
    {
        ArgumentNullException.ThrowIfNull(option);
        Add(option.Number, option.Encode());
    }

    /// <summary>Adds an option entry.</summary>
    /// <param name="entry">The entry.</param>
    public void Add(CoapOptionEntry entry) => Insert(entry);

    /// <summary>Removes every option with <paramref name="number"/> and adds one with <paramref name="value"/>.</summary>
    /// <param name="number">The option number.</param>
    /// <param name="value">The encoded value.</param>
    /// <exception cref="ArgumentException">The value is too long; the collection is then unchanged.</exception>
    public void Set(CoapOptionNumber number, ReadOnlyMemory<byte> value)
    {
        CoapOptionEntry entry = new(number, value);
        Materialize();
        RemoveAll(number);
        Insert(entry);
    }

    /// <summary>Removes every option with <paramref name="number"/>.</summary>
    /// <param name="number">The option number.</param>
    /// <returns>How many options were removed.</returns>
    public int RemoveAll(CoapOptionNumber number)
    {
        Materialize();
        int first = LowerBound(number);
        int end = first;
        while (end < _count && _items[end].Number == number)
        {
            end++;
        }

        int removed = end - first;
        if (removed > 0)
        {
            Array.Copy(_items, end, _items, first, _count - end);
            _count -= removed;
            Array.Clear(_items, _count, removed);
        }

        return removed;
    }

    /// <summary>Removes every option.</summary>
    public void Clear()
    {
        Array.Clear(_items, 0, _table is null ? _count : 0);
        _table = null;
        _count = 0;
    }

    /// <summary>True when at least one option has <paramref name="number"/>.</summary>
    /// <param name="number">The option number.</param>
    /// <returns>True when present.</returns>
    public bool Contains(CoapOptionNumber number)
    {
        int i = LowerBound(number);
        return i < _count && NumberAt(i) == number;
    }

    /// <summary>How many options have <paramref name="number"/>.</summary>
    /// <param name="number">The option number.</param>
    /// <returns>The count.</returns>
    public int CountOf(CoapOptionNumber number)
    {
        int n = 0;
        for (int i = LowerBound(number); i < _count && NumberAt(i) == number; i++)
        {
            n++;
        }

        return n;
    }

    /// <summary>Finds the first option with <paramref name="number"/>.</summary>
    /// <param name="number">The option number.</param>
    /// <param name="entry">The option, when found.</param>
    /// <returns>True when found.</returns>
    public bool TryGet(CoapOptionNumber number, out CoapOptionEntry entry)
    {
        int i = LowerBound(number);
        if (i < _count && NumberAt(i) == number)
        {
            entry = EntryAt(i);
            return true;
        }

        entry = default;
        return false;
    }

    /// <summary>The options with <paramref name="number"/>, in order, as a span (no allocation).</summary>
    /// <param name="number">The option number.</param>
    /// <returns>The matching options.</returns>
    public ReadOnlySpan<CoapOptionEntry> GetAll(CoapOptionNumber number)
    {
        Materialize();
        int first = LowerBound(number);
        int end = first;
        while (end < _count && _items[end].Number == number)
        {
            end++;
        }

        return new ReadOnlySpan<CoapOptionEntry>(_items, first, end - first);
    }

    /// <summary>The values of every option with <paramref name="number"/>, decoded as UTF-8 strings.</summary>
    /// <param name="number">The option number.</param>
    /// <returns>The strings, in order; empty when there is none.</returns>
    public string[] GetStrings(CoapOptionNumber number)
    {
        int first = LowerBound(number);
        int end = first;
        while (end < _count && NumberAt(end) == number)
        {
            end++;
        }

        if (end == first)
        {
            return [];
        }

        string[] result = new string[end - first];
        for (int i = 0; i < result.Length; i++)
        {
            result[i] = EntryAt(first + i).GetString();
        }

        return result;
    }

    /// <summary>
    /// Finds the first option that a recipient must treat as unrecognized: a registered option whose
    /// value length is outside its bounds (RFC 7252 section 5.4.3), or a second occurrence of a
    /// non-repeatable option (RFC 7252 section 5.4.5).
    /// </summary>
    /// <param name="entry">The offending option.</param>
    /// <returns>True when such an option exists.</returns>
    public bool TryGetFirstInvalid(out CoapOptionEntry entry)
    {
        for (int i = 0; i < _count; i++)
        {
            CoapOptionEntry e = EntryAt(i);
            if (!e.HasValidLength || (i > 0 && NumberAt(i - 1) == e.Number && !CoapOptionDefinition.IsRepeatableOrUnknown(e.Number)))
            {
                entry = e;
                return true;
            }
        }

        entry = default;
        return false;
    }

    /// <summary>Returns an allocation-free enumerator over the options in wire order.</summary>
    /// <returns>The enumerator.</returns>
    public Enumerator GetEnumerator() => new(this);

    IEnumerator<CoapOptionEntry> IEnumerable<CoapOptionEntry>.GetEnumerator()
    {
        for (int i = 0; i < _count; i++)
        {
            yield return EntryAt(i);
        }
    }

    IEnumerator IEnumerable.GetEnumerator() => ((IEnumerable<CoapOptionEntry>)this).GetEnumerator();

    /// <summary>The options separated by ", ", each as "Name: value".</summary>
    public override string ToString()
    {
        StringBuilder builder = new();
        for (int i = 0; i < _count; i++)
        {
            builder.Append(i == 0 ? string.Empty : ", ").Append(EntryAt(i).ToString());
        }

        return builder.ToString();
    }

    /// <summary>
    /// Entries from <paramref name="start"/> on, without building the whole entry array: the stored span
    /// itself, or as many as fit in <paramref name="scratch"/> decoded from the compact table. The writer
    /// serializes a parsed message of any size this way without a Large Object Heap array.
    /// </summary>
    internal ReadOnlySpan<CoapOptionEntry> GetBatch(int start, Span<CoapOptionEntry> scratch)
        => _table is null ? new ReadOnlySpan<CoapOptionEntry>(_items, start, _count - start) : scratch[.._table.CopyTo(start, scratch)];

    /// <summary>True while the options are the parser's compact table, so <see cref="GetBatch"/> needs scratch space.</summary>
    internal bool IsCompact => _table is not null;

    private CoapOptionEntry EntryAt(int index) => _table is null ? _items[index] : _table[index];

    private CoapOptionNumber NumberAt(int index) => _table is null ? _items[index].Number : _table.NumberAt(index);

    // Turns the compact table into the entry array that spans and changes need; once per collection.
    private void Materialize()
    {
        if (_table is null)
        {
            return;
        }

        CoapOptionEntry[] items = new CoapOptionEntry[_count];
        _table.CopyTo(0, items);
        _items = items;
        _table = null;
    }

    private void Insert(CoapOptionEntry entry)
    {
        Materialize();
        if (_count == _items.Length)
        {
            Array.Resize(ref _items, Math.Max(4, _count * 2));
        }

        // Appending in order is the common case; otherwise insert after the last option with a number <= entry's.
        int index = _count;
        if (_count > 0 && _items[_count - 1].Number > entry.Number)
        {
            // The last number exceeds entry's, so entry's number is below 65535 and + 1 cannot wrap.
            index = LowerBound((CoapOptionNumber)((ushort)entry.Number + 1));
            Array.Copy(_items, index, _items, index + 1, _count - index);
        }

        _items[index] = entry;
        _count++;
    }

    // The first index whose number is >= number (binary search over the ordered entries).
    private int LowerBound(CoapOptionNumber number)
    {
        int lo = 0, hi = _count;
        while (lo < hi)
        {
            int mid = (int)((uint)(lo + hi) >> 1);
            if (NumberAt(mid) < number)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }

        return lo;
    }

    /// <summary>Enumerates the options in wire order without allocating.</summary>
    public struct Enumerator : IEnumerator<CoapOptionEntry>
    {
        private readonly CoapOptionCollection _collection;
        private int _index;

        internal Enumerator(CoapOptionCollection collection)
        {
            _collection = collection;
            _index = -1;
        }

        /// <summary>The option at the current position.</summary>
        public readonly CoapOptionEntry Current => _collection.EntryAt(_index);

        readonly object IEnumerator.Current => Current;

        /// <summary>Advances to the next option.</summary>
        /// <returns>False past the last option.</returns>
        public bool MoveNext() => ++_index < _collection._count;

        /// <summary>Returns to before the first option.</summary>
        public void Reset() => _index = -1;

        /// <summary>Does nothing: the enumerator holds no resources.</summary>
        public readonly void Dispose()
        {
        }
    }
}
