using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Blockwise;

// A client's download with several Block2 requests outstanding (BlockwiseOptions.MaxBlocksInFlight), and the body both
// kinds of download write into.
internal sealed partial class BlockwiseStage
{
    /// <summary>Where a download's blocks go, in order: the caller's stream when it gave one (nothing is kept), else memory.</summary>
    private sealed class DownloadBody(CoapClientCall call, BlockTransfer? transfer, CoapMessage first, long maxBodySize)
    {
        private readonly Stream? _destination = transfer?.Destination;
        private readonly MemoryStream _body = new();
        private long _received;

        /// <summary>The body bytes written so far.</summary>
        public long Received => _received;

        public void Write(ReadOnlySpan<byte> bytes)
        {
            (_destination ?? _body).Write(bytes);
            _received += bytes.Length;

            // RFC 7959 section 4: Size2 with the first block, when the server sent it, is the total.
            transfer?.Progress?.Report(new CoapTransferProgress(_received, first.Size2));
        }

        /// <summary>The error when the body kept in memory has grown past <see cref="BlockwiseOptions.MaxBodySize"/>, or null.</summary>
        public CoapException? TooLarge(long announced = 0)
            => _destination is null && Math.Max(_body.Length, announced) > maxBodySize
                ? new CoapException($"The body from {call.Peer.EndPoint} exceeds {maxBodySize} bytes, the largest this client assembles (BlockwiseOptions.MaxBodySize).", call.Peer.EndPoint)
                : null;

        /// <summary>The response handed to the caller: the first block's code and options, and the whole body (none when it went to a stream).</summary>
        public CoapMessage Whole()
        {
            CoapMessage whole = first.CopyWithout(CoapOptionNumber.Block2);
            whole.Payload = _destination is null ? _body.ToArray() : default;
            return whole;
        }
    }

    /// <summary>
    /// A download that keeps up to <see cref="BlockwiseOptions.MaxBlocksInFlight"/> Block2 requests outstanding, each later
    /// block asked for by its number (RFC 7959 section 2.4) as a slot of the window frees, and blocks that arrive early
    /// waiting in memory until the ones before them are written (while a lost block is asked again, the window goes on, and
    /// what arrives meanwhile waits for it; a body kept in memory counts them against MaxBodySize). How far to ask: as far as the first
    /// block's Size2 says (section 4); without Size2 (a server that does not send it unasked, or ours toward a path with an
    /// MTU, where it would not fit the first block), ahead until a block arrives with its M bit clear, which names the last:
    /// the requests for blocks past it, at most the window less one, are ended and whatever answers them is ignored. The
    /// message layer still holds each peer to NSTART (RFC 7252 section 4.7).
    /// </summary>
    /// <remarks>
    /// Responses arrive on the endpoint's receive path and may, over an in-memory transport, arrive inside the send of a
    /// request: every change of state is made under the lock before a request goes out, and requests, the ending of those
    /// past the end and the caller's completion happen outside it.
    /// </remarks>
    private sealed class WindowedDownload
    {
        private readonly BlockwiseStage _stage;
        private readonly CoapClientCall _call;
        private readonly CoapMessage _template;
        private readonly Action<CoapClientCall, CoapMessage> _next;
        private readonly DownloadBody _body;
        private readonly ReadOnlyMemory<byte>? _etag;
        private readonly Dictionary<int, ReadOnlyMemory<byte>> _early = [];
        private readonly Dictionary<int, IDisposable?> _inFlight = [];
        private readonly int _exponent;
        private readonly int _blockBytes;
        private readonly long? _size;
        private int _last;
        private bool _lastKnown;
        private int _nextToRequest;
        private int _nextToWrite;
        private long _earlyBytes;
        private (int Number, CoapMessage Response)? _error;
        private bool _ended;

        public WindowedDownload(BlockwiseStage stage, CoapClientCall call, CoapMessage template, CoapMessage first, long? size, Action<CoapClientCall, CoapMessage> next)
        {
            _stage = stage;
            _call = call;
            _template = template;
            _next = next;
            _etag = first.ETag;
            _size = size;
            _body = new DownloadBody(call, stage.Transfer(call), first, stage._options.MaxBodySize);
            _exponent = first.Block2!.Value.SizeExponent;
            _blockBytes = 1 << (_exponent + 4);
            _lastKnown = size is not null;
            _last = size is long total ? (int)Math.Min(CoapBlock.MaxNumber, Math.Max(0, (total - 1) / _blockBytes)) : CoapBlock.MaxNumber;
            _body.Write(first.Payload.Span);
            _nextToRequest = 1;
            _nextToWrite = 1;
        }

        public void Start()
        {
            if (_body.TooLarge(_size ?? 0) is { } tooLarge)
            {
                _call.Fail(tooLarge);
                return;
            }

            Fill();
        }

        /// <summary>Asks for the next blocks until the window is full or every block (as far as is known) has been asked for.</summary>
        private void Fill()
        {
            while (true)
            {
                int number;
                lock (this)
                {
                    if (_ended || _inFlight.Count >= _stage._options.MaxBlocksInFlight || _nextToRequest > _last)
                    {
                        return;
                    }

                    number = _nextToRequest++;
                    _inFlight[number] = null;
                }

                IDisposable handle = _call.SendFollowUp(_stage, BlockRequest(_template, number, _exponent), response => OnBlock(number, response));
                bool done;
                lock (this)
                {
                    // Kept only while the request is still out: its answer may have come inside the send, or the end
                    // meanwhile, past which it is ended (ending an answered one does nothing).
                    done = !_inFlight.ContainsKey(number);
                    if (!done)
                    {
                        _inFlight[number] = handle;
                    }
                }

                if (done)
                {
                    handle.Dispose();
                }
            }
        }

        private void OnBlock(int number, CoapMessage response)
        {
            Exception? failure = null;
            CoapMessage? outcome = null;
            List<IDisposable>? pastTheEnd = null;
            lock (this)
            {
                if (_ended || !_inFlight.Remove(number) || (_lastKnown && number > _last))
                {
                    // Ended, or the answer to a request past the last block: whatever it says (4.02, most likely) is moot.
                    return;
                }

                if (!response.Code.IsSuccess)
                {
                    // With the end known, an error for a block of the body is the outcome, surfaced as it is: the caller
                    // sees the error code, never a partial body as success. With the end unknown it may answer a request
                    // past it: it counts once every block before it has come without being the last.
                    if (_lastKnown)
                    {
                        _ended = true;
                        outcome = response;
                    }
                    else if (_error is not { } earlier || number < earlier.Number)
                    {
                        _error = (number, response);
                    }
                }
                else if ((failure = WrongBlock(_call, response, number, _etag) ?? Place(response.Block2!.Value, ref pastTheEnd)) is not null)
                {
                    _ended = true;
                }
                else
                {
                    _early[number] = response.Payload;
                    _earlyBytes += response.Payload.Length;
                    try
                    {
                        while (_early.Remove(_nextToWrite, out ReadOnlyMemory<byte> payload))
                        {
                            _earlyBytes -= payload.Length;
                            _body.Write(payload.Span);
                            _nextToWrite++;
                        }

                        failure = _body.TooLarge(_body.Received + _earlyBytes);
                    }
                    catch (Exception e) when (e is not OutOfMemoryException)
                    {
                        // The caller's stream refused a block (a full disk, a closed pipe): the call fails with that.
                        failure = e;
                    }

                    if (failure is not null)
                    {
                        _ended = true;
                    }
                    else if (_lastKnown && _nextToWrite > _last)
                    {
                        _ended = true;
                        outcome = _body.Whole();
                    }
                }

                if (!_ended && _error is { } error)
                {
                    if (_lastKnown && error.Number > _last)
                    {
                        _error = null;
                    }
                    else if (_nextToWrite == error.Number)
                    {
                        // Every block before it came, and none was the last: the error answers a block of the body.
                        _ended = true;
                        outcome = error.Response;
                    }
                }
            }

            if (pastTheEnd is not null)
            {
                foreach (IDisposable request in pastTheEnd)
                {
                    request.Dispose();
                }
            }

            if (failure is not null)
            {
                _call.Fail(failure);
            }
            else if (outcome is not null)
            {
                _next(_call, outcome);
            }
            else
            {
                Fill();
            }
        }

        /// <summary>
        /// Checks a block's M bit against what is known of the end, and learns the end from the first block that says it
        /// is the last (then the requests past it are to be ended: <paramref name="pastTheEnd"/>). Called under the lock.
        /// </summary>
        private CoapException? Place(CoapBlock got, ref List<IDisposable>? pastTheEnd)
        {
            if (_lastKnown)
            {
                return got.More == got.Number < _last ? null : WrongEnd(got);
            }

            if (got.More)
            {
                return null;
            }

            foreach (int number in _early.Keys)
            {
                if (number > got.Number)
                {
                    // A later block came before and said there was more: two ends for one body.
                    return WrongEnd(got);
                }
            }

            _last = got.Number;
            _lastKnown = true;
            List<int>? numbers = null;
            foreach (KeyValuePair<int, IDisposable?> request in _inFlight)
            {
                if (request.Key > _last)
                {
                    (numbers ??= []).Add(request.Key);
                }
            }

            if (numbers is not null)
            {
                foreach (int number in numbers)
                {
                    _inFlight.Remove(number, out IDisposable? handle);
                    if (handle is not null)
                    {
                        (pastTheEnd ??= []).Add(handle);
                    }
                }
            }

            return null;
        }

        /// <summary>A block whose M bit contradicts the end known from Size2 or from an earlier block: the body is not the one announced.</summary>
        private CoapException WrongEnd(CoapBlock got)
            => new($"{_call.Peer.EndPoint} sent block {got.Number} {(got.More ? "with more to come" : "as the last")}, but {(_size is long size ? $"its first block announced {size} bytes, {_last + 1} blocks (RFC 7959 section 4)" : $"block {_last} was the last")}; fetch it again.", _call.Peer.EndPoint);
    }
}
