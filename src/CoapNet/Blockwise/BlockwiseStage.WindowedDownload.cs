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
    /// A download that keeps up to <see cref="BlockwiseOptions.MaxBlocksInFlight"/> Block2 requests outstanding: the first
    /// block's Size2 tells how many blocks there are (RFC 7959 section 4), each later one is asked for by its number
    /// (section 2.4) as a slot of the window frees, and blocks that arrive early wait in memory (at most the window) until
    /// the ones before them are written. The message layer still holds each peer to NSTART (RFC 7252 section 4.7).
    /// </summary>
    /// <remarks>
    /// Responses arrive on the endpoint's receive path and may, over an in-memory transport, arrive inside the send of a
    /// request: every change of state is made under the lock before a request goes out, and requests and the caller's
    /// completion are sent outside it.
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
        private readonly int _exponent;
        private readonly int _blockBytes;
        private readonly int _last;
        private readonly long _size;
        private int _nextToRequest;
        private int _nextToWrite;
        private int _inFlight;
        private bool _ended;

        public WindowedDownload(BlockwiseStage stage, CoapClientCall call, CoapMessage template, CoapMessage first, long size, Action<CoapClientCall, CoapMessage> next)
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
            _last = (int)Math.Max(0, (size - 1) / _blockBytes);
            _body.Write(first.Payload.Span);
            _nextToRequest = 1;
            _nextToWrite = 1;
        }

        public void Start()
        {
            if (_body.TooLarge(_size) is { } tooLarge)
            {
                _call.Fail(tooLarge);
                return;
            }

            Fill();
        }

        /// <summary>Asks for the next blocks until the window is full or every block has been asked for.</summary>
        private void Fill()
        {
            while (true)
            {
                int number;
                lock (this)
                {
                    if (_ended || _inFlight >= _stage._options.MaxBlocksInFlight || _nextToRequest > _last)
                    {
                        return;
                    }

                    number = _nextToRequest++;
                    _inFlight++;
                }

                _call.SendFollowUp(_stage, BlockRequest(_template, number, _exponent), response => OnBlock(number, response));
            }
        }

        private void OnBlock(int number, CoapMessage response)
        {
            Exception? failure = null;
            CoapMessage? outcome = null;
            lock (this)
            {
                if (_ended)
                {
                    return;
                }

                _inFlight--;
                if (!response.Code.IsSuccess)
                {
                    // Surfaced as it is: the caller sees the error code, never a partial body as success.
                    _ended = true;
                    outcome = response;
                }
                else if ((failure = WrongBlock(_call, response, number, _etag) ?? WrongEnd(response.Block2!.Value)) is not null)
                {
                    _ended = true;
                }
                else
                {
                    _early[number] = response.Payload;
                    try
                    {
                        while (_early.Remove(_nextToWrite, out ReadOnlyMemory<byte> payload))
                        {
                            _body.Write(payload.Span);
                            _nextToWrite++;
                        }
                    }
                    catch (Exception e) when (e is not OutOfMemoryException)
                    {
                        // The caller's stream refused a block (a full disk, a closed pipe): the call fails with that.
                        _ended = true;
                        failure = e;
                    }

                    if (failure is null && _nextToWrite > _last)
                    {
                        _ended = true;
                        outcome = _body.Whole();
                    }
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

        /// <summary>A block whose More flag contradicts the Size2 of the first block: the body is not the one announced.</summary>
        private CoapException? WrongEnd(CoapBlock got)
            => got.More == got.Number < _last
                ? null
                : new CoapException($"{_call.Peer.EndPoint} sent block {got.Number} {(got.More ? "with more to come" : "as the last")}, but its first block announced {_size} bytes, {_last + 1} blocks (RFC 7959 section 4); fetch it again.", _call.Peer.EndPoint);
    }
}
