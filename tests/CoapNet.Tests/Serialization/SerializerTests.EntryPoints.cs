namespace CoapNet.Tests.Serialization;

// The behaviour suite of SerializerTests, once per entry point (System.Text.Json's StreamTests_Sync /
// StreamTests_Async pattern). Each class pairs a read entry point with a write entry point.

public sealed class SerializerTests_Span : BufferSerializerTests
{
    private protected override SerializerEntryPoint Entry { get; } = new SerializerEntryPoint.Span();
}

public sealed class SerializerTests_Memory : BufferSerializerTests
{
    private protected override SerializerEntryPoint Entry { get; } = new SerializerEntryPoint.Memory();
}

public sealed class SerializerTests_Try : BufferSerializerTests
{
    private protected override SerializerEntryPoint Entry { get; } = new SerializerEntryPoint.Try();
}

public sealed class SerializerTests_SyncStream : ConnectionSerializerTests
{
    private protected override SerializerEntryPoint Entry { get; } = new SerializerEntryPoint.SyncStream();
}

public sealed class SerializerTests_AsyncStream : ConnectionSerializerTests
{
    private protected override SerializerEntryPoint Entry { get; } = new SerializerEntryPoint.AsyncStream();
}

public sealed class SerializerTests_AsyncOneByteStream : ConnectionSerializerTests
{
    private protected override SerializerEntryPoint Entry { get; } = new SerializerEntryPoint.AsyncOneByteStream();
}

public sealed class SerializerTests_Pipe : ConnectionSerializerTests
{
    private protected override SerializerEntryPoint Entry { get; } = new SerializerEntryPoint.Pipe();
}

public sealed class SerializerTests_PipeOneByteWrites : ConnectionSerializerTests
{
    private protected override SerializerEntryPoint Entry { get; } = new SerializerEntryPoint.PipeOneByteWrites();
}

public sealed class SerializerTests_ReadFrameOneByteSegments : ConnectionSerializerTests
{
    private protected override SerializerEntryPoint Entry { get; } = new SerializerEntryPoint.ReadFrameOneByteSegments();
}
