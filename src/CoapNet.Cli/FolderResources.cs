using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Cli;

/// <summary>
/// A folder's files as read-only CoAP resources: GET /a/b.json answers the file a/b.json with a
/// Content-Format from its extension. Never anything outside the folder: a path with ".." or one that
/// leads through a symbolic link out of it is answered 4.03 Forbidden.
/// </summary>
internal sealed class FolderResources
{
    // A file the server cannot send in one message is refused before it is read: TCP's largest message (block-wise comes later).
    private const long MaxFileSize = 64 * 1024;

    private readonly string _root;

    /// <summary>Serves <paramref name="root"/>.</summary>
    /// <param name="root">The folder.</param>
    public FolderResources(string root)
    {
        _root = Path.TrimEndingDirectorySeparator(Path.GetFullPath(root));
    }

    /// <summary>
    /// Maps one GET route per file present now, so discovery lists each with its "ct", and a catch-all
    /// for files added later (and for the paths it must refuse).
    /// </summary>
    /// <param name="server">The server, not yet started.</param>
    /// <returns>The number of files listed in discovery.</returns>
    public int Map(CoapServer server)
    {
        int listed = 0;
        EnumerationOptions walk = new() { RecurseSubdirectories = true, IgnoreInaccessible = true, AttributesToSkip = 0 };
        foreach (string path in Directory.EnumerateFiles(_root, "*", walk))
        {
            string relative = Path.GetRelativePath(_root, path).Replace(Path.DirectorySeparatorChar, '/');

            // A name that is not a literal route segment ("{x}", an empty segment) is still served through the catch-all.
            if (relative.Contains('{', StringComparison.Ordinal) || relative.Contains('}', StringComparison.Ordinal) || Resolve(relative) is null)
            {
                continue;
            }

            server.MapGet("/" + relative, request => Serve(relative)).Produces(ContentFormats.ForFile(relative));
            listed++;
        }

        server.MapGet("/{*path}", request => Serve(request.GetRouteValue("path") ?? string.Empty));
        return listed;
    }

    /// <summary>The answer for a path relative to the folder.</summary>
    /// <param name="relative">The request path without the leading '/'.</param>
    /// <returns>2.05 with the file, 4.03 for a path out of the folder, 4.04 when there is no such file.</returns>
    internal CoapResponse Serve(string relative)
    {
        string? path = Resolve(relative);
        if (path is null)
        {
            return CoapResponse.Diagnostic(CoapCode.Forbidden, "outside the served folder");
        }

        FileInfo file = new(path);
        if (!file.Exists)
        {
            return new CoapResponse(CoapCode.NotFound);
        }

        if (file.Length > MaxFileSize)
        {
            return CoapResponse.Diagnostic(CoapCode.InternalServerError, $"the file is {file.Length} bytes, more than one message carries");
        }

        try
        {
            return CoapResponse.Content(File.ReadAllBytes(path), ContentFormats.ForFile(path));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return CoapResponse.Diagnostic(CoapCode.InternalServerError, "the file cannot be read");
        }
    }

    /// <summary>The full path of <paramref name="relative"/> inside the folder, or null when it would lead out of it.</summary>
    private string? Resolve(string relative)
    {
        // Uri-Path segments arrive decoded, so "..", "\" and NUL are checked here, not trusted to the URI layer.
        foreach (string segment in relative.Split('/'))
        {
            if (segment is "" or "." or ".." || segment.Contains('\\', StringComparison.Ordinal) || segment.Contains('\0', StringComparison.Ordinal))
            {
                return null;
            }
        }

        string full = Path.GetFullPath(Path.Combine(_root, relative));
        if (!IsInside(full))
        {
            return null;
        }

        // A symbolic link anywhere on the way may point out of the folder: follow each one and check where it ends.
        string current = _root;
        foreach (string segment in relative.Split('/'))
        {
            current = Path.Combine(current, segment);
            FileSystemInfo entry = Directory.Exists(current) ? new DirectoryInfo(current) : new FileInfo(current);
            if (entry.LinkTarget is not null && (entry.ResolveLinkTarget(returnFinalTarget: true) is not { } target || !IsInside(Path.GetFullPath(target.FullName))))
            {
                return null;
            }
        }

        return full;
    }

    private bool IsInside(string full)
        => full.Length > _root.Length && full.StartsWith(_root, StringComparison.Ordinal) && full[_root.Length] == Path.DirectorySeparatorChar;
}
