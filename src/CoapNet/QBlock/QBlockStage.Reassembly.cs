using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.QBlock;

// The server side of Q-Block1 (RFC 9177 sections 4.3, 5 and 7.2): the blocks of a body arrive without waiting for an
// answer each, in any order; they are joined before the handler sees one request, and the client is told what is missing.
internal sealed partial class QBlockStage
{
    // A buffer starts at most this large and grows with what arrives, whatever Size1 announces.
    private const int InitialUploadCapacity = 64 * 1024;

    private readonly Dictionary<string, Reassembly> _uploads = new(StringComparer.Ordinal);
    private long _reassemblyBytes;

    /// <summary>One Q-Block1 block: joined into its body; the handler sees the body once it is whole.</summary>
    private void ReceiveBlock(CoapExchange exchange, CoapBlock block, Action<CoapExchange> next)
    {
        CoapMessage request = exchange.RequestAt(this);
        string? refusal = request.RequestTag is null
            ? "A Q-Block1 request carries a Request-Tag, the same in every block of one body (RFC 9177 section 4.3)."
            : block.More && request.Payload.Length != block.Size
                ? $"Block {block.Number} carries {request.Payload.Length} bytes; every block but the last carries exactly {block.Size} (RFC 7959 section 2.2)."
                : !block.More && request.Payload.Length > block.Size
                    ? $"The last block carries {request.Payload.Length} bytes, more than the block size {block.Size} (RFC 7959 section 2.2)."
                    : null;
        if (refusal is not null)
        {
            exchange.RespondFrom(this, Diagnostic(CoapCode.BadRequest, refusal));
            return;
        }

        long announced = Math.Max(request.Size1 ?? 0, block.Offset + request.Payload.Length);
        if (announced > _bounds.MaxUploadSize || announced > _bounds.MaxReassemblyBytes)
        {
            // RFC 7959 section 2.9.3: Size1 in a 4.13 tells the client the largest body the server takes.
            CoapMessage tooLarge = Diagnostic(CoapCode.RequestEntityTooLarge, $"The body ({announced} bytes) exceeds the {Math.Min(_bounds.MaxUploadSize, _bounds.MaxReassemblyBytes)} bytes this server accepts.");
            tooLarge.Size1 = (uint)Math.Min(Math.Min(_bounds.MaxUploadSize, _bounds.MaxReassemblyBytes), uint.MaxValue);
            exchange.RespondFrom(this, tooLarge);
            return;
        }

        string key = UploadKey(exchange);
        Reassembly? upload;
        lock (_gate)
        {
            SweepUploads();
            if (!_uploads.TryGetValue(key, out upload))
            {
                if (_uploads.Count >= _bounds.MaxReassemblies || _reassemblyBytes + announced > _bounds.MaxReassemblyBytes)
                {
                    upload = null;
                }
                else
                {
                    upload = new Reassembly(this, key, request.ContentFormat, block.SizeExponent, announced, request.Size1);
                    _uploads.Add(key, upload);
                    _reassemblyBytes += announced;
                }
            }
        }

        if (upload is not null && upload.IsNew && _uploadCheck?.Invoke(request.CopyWithout(CoapOptionNumber.QBlock1, CoapOptionNumber.Size1)) is { } refused)
        {
            // Nothing above would take the whole body (no route, a method or Content-Format it does not accept): say so at
            // the first block, before the rest is sent and held, as block-wise does (RFC 7959 section 2.5).
            ForgetUpload(upload);
            exchange.RespondFrom(this, refused);
            return;
        }

        if (upload is null)
        {
            // Full for now: 5.03 with Max-Age says "try again later" (RFC 7252 section 5.9.3.4), as block-wise does.
            CoapMessage busy = Diagnostic(CoapCode.ServiceUnavailable, "Too many uploads are in progress; try again later.");
            busy.MaxAge = (uint)Math.Ceiling(_options.NonPartialTimeout.TotalSeconds);
            exchange.RespondFrom(this, busy);
            return;
        }

        Outcome outcome = upload.Add(exchange, block, request, out int acknowledged, out string? mismatch, out List<int>? missing);
        if (outcome == Outcome.Mismatch)
        {
            ForgetUpload(upload);
            exchange.RespondFrom(this, Diagnostic(CoapCode.RequestEntityIncomplete, mismatch + " (RFC 9177 section 4.3); start again with a new Request-Tag."));
            return;
        }

        if (outcome == Outcome.Whole)
        {
            ForgetUpload(upload);
            CoapMessage whole = request.CopyWithout(CoapOptionNumber.QBlock1, CoapOptionNumber.Size1);
            whole.Payload = upload.Body;
            exchange.ReplaceRequest(this, whole);
            next(exchange);
            return;
        }

        if (outcome == Outcome.Gap)
        {
            // RFC 9177 section 7.2: the first block of a new set, while an earlier set still lacks some, is answered with
            // a 4.08 listing them at once, rather than NON_RECEIVE_TIMEOUT after the latest block (which the client's
            // next sets would keep putting off); the client sends them before its next set.
            exchange.RespondFrom(this, Incomplete(missing!));
            return;
        }

        // RFC 9177 section 4.3: 2.31 says every block up to NUM arrived, so the client sends the next set at once. Not for
        // CON, whose ACKs already say so, except block 0: a client that does not yet know whether this server takes
        // Q-Block1 (it sends that block as CON) hears it at once instead of guessing from the silence after the ACK.
        bool probe = block.Number == 0 && request.Type == CoapMessageType.Confirmable;
        if ((outcome == Outcome.SetDone && request.Type == CoapMessageType.NonConfirmable) || probe)
        {
            CoapMessage proceed = new() { Code = CoapCode.Continue };
            SetBlock(proceed, CoapOptionNumber.QBlock1, new CoapBlock(outcome == Outcome.SetDone ? acknowledged : 0, true, block.SizeExponent));
            exchange.RespondFrom(this, proceed);
            return;
        }

        // No answer per block (RFC 9177 section 4.3): nothing for a NON, the empty ACK for a CON.
        exchange.EndWithoutResponse();
    }

    /// <summary>4.08 with the missing block numbers as a CBOR sequence (RFC 9177 section 5).</summary>
    private static CoapMessage Incomplete(List<int> missing)
        => new() { Code = CoapCode.RequestEntityIncomplete, ContentFormat = CoapContentFormat.MissingBlocksCborSeq, Payload = MissingBlocks.Encode(missing) };

    /// <summary>An upload is told apart by its peer, method, URI and Request-Tag (RFC 9177 section 4.3, RFC 9175 section 3).</summary>
    private string UploadKey(CoapExchange exchange)
        => Key(exchange) + "|tag=" + Convert.ToHexString(exchange.RequestAt(this).RequestTag!.Value.Span);

    private void ForgetUpload(Reassembly upload)
    {
        lock (_gate)
        {
            if (_uploads.TryGetValue(upload.Key, out Reassembly? current) && ReferenceEquals(current, upload))
            {
                _uploads.Remove(upload.Key);
                _reassemblyBytes -= upload.Reserved;
            }
        }

        upload.Close();
    }

    // Caller holds _gate. Uploads whose latest block is older than NON_PARTIAL_TIMEOUT are dropped.
    private void SweepUploads()
    {
        if (_uploads.Count == 0)
        {
            return;
        }

        long now = _time.GetTimestamp();
        List<Reassembly>? expired = null;
        foreach (Reassembly upload in _uploads.Values)
        {
            if (upload.ExpiresAt <= now)
            {
                (expired ??= []).Add(upload);
            }
        }

        if (expired is not null)
        {
            foreach (Reassembly upload in expired)
            {
                _uploads.Remove(upload.Key);
                _reassemblyBytes -= upload.Reserved;
                upload.Close();
            }
        }
    }

    /// <summary>Reserves <paramref name="more"/> bytes more for an upload that grew past what it announced; false past the bound.</summary>
    private bool Reserve(Reassembly upload, long more)
    {
        lock (_gate)
        {
            if (_reassemblyBytes + more > _bounds.MaxReassemblyBytes)
            {
                return false;
            }

            _reassemblyBytes += more;
            upload.Reserved += more;
            return true;
        }
    }

    /// <summary>What one block did to its upload.</summary>
    private enum Outcome
    {
        /// <summary>Kept (or already had); nothing to answer.</summary>
        Kept,

        /// <summary>Every block up to the end of a set arrived: 2.31.</summary>
        SetDone,

        /// <summary>The first block of a new set, while earlier blocks are missing: 4.08 with their numbers.</summary>
        Gap,

        /// <summary>The body is whole.</summary>
        Whole,

        /// <summary>The block contradicts the upload (block size, Content-Format, past the announced end): it ends.</summary>
        Mismatch,
    }

    /// <summary>
    /// One body being joined from Q-Block1 blocks: the bytes, which blocks arrived, the latest request (a 4.08 answers
    /// it, RFC 9177 section 5), and the timer that asks for what is missing NON_RECEIVE_TIMEOUT after the latest block,
    /// doubling for each repeated 4.08 up to NON_MAX_RETRANSMIT (section 7.2).
    /// </summary>
    private sealed class Reassembly(QBlockStage stage, string key, ushort? contentFormat, int exponent, long reserved, uint? size1) : ICoapDeliveryListener
    {
        private readonly List<bool> _received = [];
        private byte[] _body = new byte[(int)Math.Min(reserved, InitialUploadCapacity)];
        private int _contiguous;
        private int _acknowledged;
        private int _arrived;
        private int _last = -1;
        private int _highestSet = -1;
        private long _length;
        private int _repeats;
        private CoapExchange? _latest;
        private ITimer? _timer;
        private bool _closed;

        public string Key { get; } = key;

        public long Reserved { get; set; } = reserved;

        /// <summary>True until its first block has been added.</summary>
        public bool IsNew => Volatile.Read(ref _arrived) == 0 && !_closed;

        public long ExpiresAt { get; private set; } = long.MaxValue;

        /// <summary>The whole body, once <see cref="Add"/> said so.</summary>
        public ReadOnlyMemory<byte> Body => _body.AsMemory(0, (int)_length);

        private int BlockBytes => 1 << (exponent + 4);

        /// <summary>The number of blocks when known: from Size1, or from the last block (M unset).</summary>
        private int Count => _last >= 0 ? _last + 1 : size1 is uint total ? (int)Math.Max(1, (total + BlockBytes - 1) / BlockBytes) : -1;

        public Outcome Add(CoapExchange exchange, CoapBlock block, CoapMessage request, out int acknowledged, out string? mismatch, out List<int>? missing)
        {
            acknowledged = -1;
            mismatch = null;
            missing = null;
            ReadOnlySpan<byte> payload = request.Payload.Span;
            lock (this)
            {
                if (_closed)
                {
                    return Outcome.Kept;
                }

                if (block.SizeExponent != exponent || request.ContentFormat != contentFormat)
                {
                    mismatch = block.SizeExponent != exponent ? "The block size changed during the upload" : "The Content-Format changed during the upload";
                    return Outcome.Mismatch;
                }

                if ((Count >= 0 && block.Number >= Count) || (!block.More && _last >= 0 && block.Number != _last))
                {
                    mismatch = $"Block {block.Number} lies past the end of the body";
                    return Outcome.Mismatch;
                }

                _latest = exchange;
                ExpiresAt = stage._time.GetTimestamp() + (long)(stage._options.NonPartialTimeout.TotalSeconds * stage._time.TimestampFrequency);
                while (_received.Count <= block.Number)
                {
                    _received.Add(false);
                }

                if (!_received[block.Number])
                {
                    long end = block.Offset + payload.Length;
                    if (end > Reserved && !stage.Reserve(this, end - Reserved))
                    {
                        mismatch = "The uploads in progress hold as much as this server takes; the body";
                        return Outcome.Mismatch;
                    }

                    if (end > _body.Length)
                    {
                        Array.Resize(ref _body, (int)Math.Min(Math.Max(end, 2L * _body.Length), Math.Max(end, Reserved)));
                    }

                    payload.CopyTo(_body.AsSpan((int)block.Offset));
                    _received[block.Number] = true;
                    _arrived++;
                    _repeats = 0;
                    if (!block.More)
                    {
                        _last = block.Number;
                        _length = end;
                    }

                    while (_contiguous < _received.Count && _received[_contiguous])
                    {
                        _contiguous++;
                    }
                }

                if (Count >= 0 && _contiguous >= Count)
                {
                    Stop(ref _timer);
                    _closed = true;
                    return Outcome.Whole;
                }

                Arm();
                int maxPayloads = stage._options.MaxPayloads;
                int set = block.Number / maxPayloads;
                if (set > _highestSet)
                {
                    bool gap = _highestSet >= 0 && _contiguous < set * maxPayloads;
                    _highestSet = set;
                    if (gap)
                    {
                        missing = Missing(set * maxPayloads);
                        return Outcome.Gap;
                    }
                }

                int sets = _contiguous / maxPayloads;
                if (sets > _acknowledged)
                {
                    _acknowledged = sets;
                    acknowledged = (sets * maxPayloads) - 1;
                    return Outcome.SetDone;
                }

                return Outcome.Kept;
            }
        }

        public void Close()
        {
            lock (this)
            {
                _closed = true;
                _latest = null;
                Stop(ref _timer);
            }
        }

        /// <inheritdoc/>
        public void OnDelivered()
        {
            // A NON 4.08 is sent and forgotten; the timer repeats it while blocks stay missing.
        }

        /// <inheritdoc/>
        public void OnDropped()
        {
            // A stage below kept the 4.08 back (No-Response declining 4.xx): the timer asks again while blocks stay missing.
        }

        /// <inheritdoc/>
        public void OnRejected() => stage.ForgetUpload(this);

        /// <inheritdoc/>
        public void OnFailed(Exception reason) => stage.ForgetUpload(this);

        // Caller holds the lock. The missing blocks below end, lowest first, at most MAX_PAYLOADS of them so one packet
        // carries the 4.08 (RFC 9177 section 5).
        private List<int> Missing(int end)
        {
            List<int> missing = [];
            for (int number = _contiguous; number < end && missing.Count < stage._options.MaxPayloads; number++)
            {
                if (number >= _received.Count || !_received[number])
                {
                    missing.Add(number);
                }
            }

            return missing;
        }

        // Caller holds the lock.
        private void Arm()
        {
            Stop(ref _timer);
            _timer = stage._time.CreateTimer(static state => ((Reassembly)state!).OnReceiveTimeout(), this, stage.ReceiveTimeout(_repeats), Timeout.InfiniteTimeSpan);
        }

        /// <summary>
        /// NON_RECEIVE_TIMEOUT after the latest block with some still missing: 4.08 with their numbers (RFC 9177 section
        /// 5), at most MAX_PAYLOADS of them so one packet carries it; given up after NON_MAX_RETRANSMIT repeats.
        /// </summary>
        private void OnReceiveTimeout()
        {
            CoapExchange? latest;
            List<int> missing = [];
            lock (this)
            {
                if (_closed || _latest is null)
                {
                    return;
                }

                if (_repeats >= stage._options.NonMaxRetransmit)
                {
                    latest = null;
                }
                else
                {
                    latest = _latest;
                    int maxPayloads = stage._options.MaxPayloads;
                    missing = Missing(Count >= 0 ? Count : _received.Count + (maxPayloads - (_received.Count % maxPayloads)));
                    _repeats++;
                    Arm();
                }
            }

            if (latest is null)
            {
                // RFC 9177 section 7.2: past NON_MAX_RETRANSMIT the partial body is discarded.
                stage.ForgetUpload(this);
                return;
            }

            CoapMessage incomplete = Incomplete(missing);
            incomplete.Type = CoapMessageType.NonConfirmable;
            try
            {
                latest.ForFurtherResponse(this).RespondFrom(stage, incomplete);
            }
            catch (ObjectDisposedException)
            {
                stage.ForgetUpload(this);
            }
        }
    }
}
