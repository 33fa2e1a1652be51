using CoapNet.Blockwise;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.QBlock;

// The client side (RFC 9177 sections 4.1, 4.3 and 4.4): which requests offer Q-Block, and what the two kinds of transfer
// share (the follow-ups whose tokens stay open, the fall-back to Block1/Block2 after a 4.02).
internal sealed partial class QBlockStage
{
    /// <inheritdoc/>
    public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
    {
        // A peer that refused Q-Block, a reliable transport (BERT there), a caller's own block options or a streamed
        // body (block-wise reads and writes streams block by block): block-wise below does it all. A download that
        // only asks for progress reports stays here: the Q-Block2 download reports each block as it arrives.
        bool? supports = Supports(call.Peer);
        BlockTransfer? transfer = call.Features.Get<BlockTransfer>();
        bool streamed = transfer is { Source: not null } or { Destination: not null };
        if (supports == false || call.IsReliable || streamed || HasBlockOption(request))
        {
            next(call, request);
            return;
        }

        int bytes = 1 << (_sizeExponent + 4);
        bool whole = (request.Payload.Length <= bytes || call.FitsOneMessage(request))
            && BlockwiseStage.FitsBudget(request, call.NextTokenLength, _paths.MessageBudget(call.Peer));
        if (CarriesBody(request.Code) && transfer is null && !whole)
        {
            new Upload(this, call, request, probing: supports is null).Start(next);
            return;
        }

        // RFC 9177 section 4.1: a GET or FETCH offers Q-Block2 so that a large response comes back in Q-Block2 blocks;
        // an observation's notifications go through block-wise (RFC 7959 section 2.6).
        if ((request.Code == CoapCode.Get || request.Code == CoapCode.Fetch) && request.Observe is null)
        {
            new Download(this, call, request, transfer?.Progress, probing: supports is null).Start(next);
            return;
        }

        next(call, request);
    }

    /// <inheritdoc/>
    public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
    {
        if (call.Features.Get<ClientTransfer>() is { } transfer)
        {
            transfer.OnResponse(response);
            return;
        }

        next(call, response);
    }

    /// <summary>
    /// The block size a Q-Block2 offer asks for: ours, or on a path with an MTU the largest whose response fits one packet
    /// with the token and the Q-Block2 option (the server fits its own options, RFC 9177 section 4.4).
    /// </summary>
    private int OfferedExponent(CoapClientCall call)
        => _paths.MessageBudget(call.Peer) is int budget
            ? BlockwiseStage.AskedExponent(_sizeExponent, budget, call.NextTokenLength, CoapOptionNumber.QBlock2)
            : _sizeExponent;

    private static bool CarriesBody(CoapCode code)
        => code == CoapCode.Put || code == CoapCode.Post || code == CoapCode.Fetch || code == CoapCode.Patch || code == CoapCode.IPatch;

    /// <summary>
    /// A client's Q-Block transfer, the call's feature: every response to it, on the call's own token or a follow-up's,
    /// comes here; the outcome goes up to the caller through <see cref="CoapClientCall.PassUp"/>.
    /// </summary>
    private abstract class ClientTransfer(QBlockStage stage, CoapClientCall call, CoapMessage original, int keepOpen)
    {
        private readonly Queue<IDisposable> _open = new();

        protected QBlockStage Stage => stage;

        protected CoapClientCall Call => call;

        protected CoapMessage Original => original;

        /// <summary>A response to the call or to one of its follow-ups.</summary>
        public abstract void OnResponse(CoapMessage response);

        /// <summary>
        /// Sends a follow-up whose token stays open for the responses it brings; the oldest beyond
        /// <c>keepOpen</c> are closed (a server answers with the token of the latest request of a set, RFC 9177 sections 4.3, 4.4).
        /// </summary>
        protected void SendOpen(CoapMessage request)
        {
            IDisposable handle = call.SendFollowUp(stage, request, OnResponse, CoapExpectedResponses.Several);
            IDisposable? oldest = null;
            lock (_open)
            {
                _open.Enqueue(handle);
                if (_open.Count > keepOpen)
                {
                    oldest = _open.Dequeue();
                }
            }

            oldest?.Dispose();
        }

        /// <summary>
        /// RFC 9177 section 4.1: the server refused the Q-Block option (4.02 Bad Option), so the caller's request goes
        /// again without it, through block-wise (RFC 7959), and this peer is not offered Q-Block again.
        /// </summary>
        protected void FallBack()
        {
            stage.NoteSupport(call.Peer, false);
            CoapMessage plain = original.CopyWithout(CoapOptionNumber.QBlock1, CoapOptionNumber.QBlock2);
            plain.Token = default;
            call.SendFollowUp(stage, plain, response => call.PassUp(stage, response));
        }

        /// <summary>
        /// Sends the request as the call's own (RFC 9177 section 4.4: the server answers it more than once under its token),
        /// with this transfer as the call's feature, which its responses come to.
        /// </summary>
        protected void Begin(CoapMessage request, Action<CoapClientCall, CoapMessage> next)
        {
            call.ExpectedResponses = CoapExpectedResponses.Several;
            call.Features.Set(this);
            next(call, request);
        }

        /// <summary>The transfer's outcome, up to the caller; the call's end closes every open follow-up.</summary>
        protected void Finish(CoapMessage response)
        {
            stage.NoteSupport(call.Peer, true);
            call.PassUp(stage, response);
        }
    }
}
