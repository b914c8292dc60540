# Installs the `zidane` binary on Windows from a GitHub release, no Rust toolchain
# needed (PowerShell 5.1 or later):
#
#   irm https://github.com/zidane-rs/zidane/releases/latest/download/install.ps1 | iex
#
# It picks the zip for this machine, checks it against the release's SHA-256, puts
# `zidane.exe` and `zidane-worker.exe` (the worker behind a Restate server,
# docs/DURABLE.md) in %LOCALAPPDATA%\Programs\zidane\bin and zidane's completions
# (PowerShell's among them) and man pages in %LOCALAPPDATA%\Programs\zidane, and adds
# the bin folder to the user's PATH where it is missing. Settings (environment):
#
#   ZIDANE_VERSION         a release such as 0.1.0 (default: the latest)
#   ZIDANE_INSTALL_DIR     where the binary goes
#                          (default: %LOCALAPPDATA%\Programs\zidane\bin)
#   ZIDANE_DATA_DIR        where man pages and completions go
#                          (default: %LOCALAPPDATA%\Programs\zidane)
#   ZIDANE_ARTIFACT        a local zidane-<target>.zip to install instead of a
#                          download; its checksum is read from <artifact>.sha256
#   ZIDANE_REPO            the GitHub repository (default: zidane-rs/zidane)
#   ZIDANE_NO_MODIFY_PATH  set to 1 to leave the user's PATH as it is
#
# The mirror of install.sh (Linux and macOS): the same settings and messages.

# Everything runs inside a function: `irm | iex` runs the script in the caller's own
# session, where `exit` would close their shell and settings would outlive the install.
function Install-Zidane {
    $ErrorActionPreference = 'Stop'
    $ProgressPreference = 'SilentlyContinue'

    function Say([string] $Message) {
        [Console]::Error.WriteLine("zidane install: $Message")
    }

    function Get-ZidaneTarget {
        $arch = $null
        try {
            $arch = [System.Runtime.InteropServices.RuntimeInformation]::OSArchitecture.ToString()
        } catch {
            # .NET Framework before 4.7.1 has no RuntimeInformation: the OS's variables.
            $arch = $env:PROCESSOR_ARCHITEW6432
            if (-not $arch) { $arch = $env:PROCESSOR_ARCHITECTURE }
        }
        switch -Regex ($arch) {
            '^(X64|AMD64)$' { return 'x86_64-pc-windows-msvc' }
            '^(Arm64|ARM64)$' { return 'aarch64-pc-windows-msvc' }
            default {
                throw "no release build for the $arch processor; build from source: cargo install zidane-cli"
            }
        }
    }

    function Get-Download([string] $Url, [string] $File) {
        try {
            Invoke-WebRequest -UseBasicParsing -Uri $Url -OutFile $File
        } catch {
            throw "cannot download ${Url}: $($_.Exception.Message)"
        }
    }

    function Test-OnPath([string] $PathList, [string] $Dir) {
        $want = $Dir.TrimEnd('\')
        foreach ($entry in ($PathList -split ';')) {
            if ($entry -and ([Environment]::ExpandEnvironmentVariables($entry).TrimEnd('\') -ieq $want)) {
                return $true
            }
        }
        return $false
    }

    # Windows PowerShell 5.1 may offer only TLS 1.0 to GitHub, which refuses it.
    if ($PSVersionTable.PSVersion.Major -lt 6) {
        [Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
    }

    $repo = if ($env:ZIDANE_REPO) { $env:ZIDANE_REPO } else { 'zidane-rs/zidane' }
    $version = if ($env:ZIDANE_VERSION) { $env:ZIDANE_VERSION } else { 'latest' }
    $home_dir = Join-Path $env:LOCALAPPDATA 'Programs\zidane'
    $install_dir = if ($env:ZIDANE_INSTALL_DIR) { $env:ZIDANE_INSTALL_DIR } else { Join-Path $home_dir 'bin' }
    $data_dir = if ($env:ZIDANE_DATA_DIR) { $env:ZIDANE_DATA_DIR } else { $home_dir }
    $artifact = $env:ZIDANE_ARTIFACT

    $work = Join-Path ([IO.Path]::GetTempPath()) ("zidane-install-" + [Guid]::NewGuid().ToString('N'))
    New-Item -ItemType Directory -Path $work | Out-Null
    try {
        if ($artifact) {
            if (-not (Test-Path -LiteralPath $artifact -PathType Leaf)) { throw "no artifact at $artifact" }
            if (-not (Test-Path -LiteralPath "$artifact.sha256" -PathType Leaf)) { throw "no checksum at $artifact.sha256" }
            $archive = $artifact
            $sums = "$artifact.sha256"
        } else {
            $name = "zidane-$(Get-ZidaneTarget).zip"
            if ($version -eq 'latest') {
                $base = "https://github.com/$repo/releases/latest/download"
            } else {
                $base = "https://github.com/$repo/releases/download/v$($version.TrimStart('v'))"
            }
            Say "downloading $base/$name"
            $archive = Join-Path $work $name
            $sums = Join-Path $work "$name.sha256"
            Get-Download "$base/$name" $archive
            Get-Download "$base/$name.sha256" $sums
        }

        $expected = ((Get-Content -LiteralPath $sums -Raw) -split '\s+' | Where-Object { $_ } | Select-Object -First 1)
        $actual = (Get-FileHash -LiteralPath $archive -Algorithm SHA256).Hash.ToLowerInvariant()
        if (-not $expected -or $expected.ToLowerInvariant() -ne $actual) {
            throw "checksum mismatch for ${archive}: expected $expected, got $actual; nothing installed"
        }

        $unpacked = Join-Path $work 'unpacked'
        Expand-Archive -LiteralPath $archive -DestinationPath $unpacked
        $dir = Get-ChildItem -LiteralPath $unpacked -Directory -Filter 'zidane-*' | Select-Object -First 1
        foreach ($name in @('zidane', 'zidane-worker')) {
            if (-not $dir -or -not (Test-Path -LiteralPath (Join-Path $dir.FullName "$name.exe") -PathType Leaf)) {
                throw "$archive holds no zidane-<target>\$name.exe; nothing installed"
            }
        }
        $dir = $dir.FullName

        New-Item -ItemType Directory -Force -Path $install_dir | Out-Null
        foreach ($name in @('zidane', 'zidane-worker')) {
            $target_file = Join-Path $install_dir "$name.exe"
            $fresh = Join-Path $install_dir ".$name.new.exe"
            Copy-Item -LiteralPath (Join-Path $dir "$name.exe") -Destination $fresh -Force
            # Windows will not replace a running program's file, but lets it be renamed:
            # a running zidane (or worker) keeps its old file under another name until it
            # exits, and the next install removes what no longer runs.
            Get-ChildItem -LiteralPath $install_dir -Filter ".$name.old-*.exe" |
                Remove-Item -Force -ErrorAction SilentlyContinue
            if (Test-Path -LiteralPath $target_file) {
                $old = Join-Path $install_dir ".$name.old-$([Guid]::NewGuid().ToString('N')).exe"
                Move-Item -LiteralPath $target_file -Destination $old
            }
            Move-Item -LiteralPath $fresh -Destination $target_file -Force
        }
        $binary = Join-Path $install_dir 'zidane.exe'
        $worker = Join-Path $install_dir 'zidane-worker.exe'

        foreach ($part in @('completions', 'man')) {
            $from = Join-Path $dir $part
            if (Test-Path -LiteralPath $from -PathType Container) {
                New-Item -ItemType Directory -Force -Path $data_dir | Out-Null
                Copy-Item -LiteralPath $from -Destination $data_dir -Recurse -Force
            }
        }

        $installed = & $binary --version
        if ($LASTEXITCODE -ne 0) { throw "$binary --version failed ($LASTEXITCODE)" }
        Say "installed $installed to $binary"
        $installed = & $worker --version
        if ($LASTEXITCODE -ne 0) { throw "$worker --version failed ($LASTEXITCODE)" }
        Say "installed $installed to $worker"
        $completions = Join-Path $data_dir 'completions\_zidane.ps1'
        if (Test-Path -LiteralPath $completions) {
            Say "PowerShell completions: add this line to your `$PROFILE: . '$completions'"
        }

        # The user's PATH as stored (REG_EXPAND_SZ, %VARIABLES% unexpanded), so writing
        # it back keeps every other entry as it was.
        $key = [Microsoft.Win32.Registry]::CurrentUser.OpenSubKey('Environment', $true)
        try {
            $user_path = [string] $key.GetValue('Path', '', [Microsoft.Win32.RegistryValueOptions]::DoNotExpandEnvironmentNames)
            if (Test-OnPath $user_path $install_dir) {
                # Already on the user's PATH.
            } elseif ($env:ZIDANE_NO_MODIFY_PATH -eq '1') {
                Say "$install_dir is not on your PATH (ZIDANE_NO_MODIFY_PATH=1: left as it is); add it to use zidane by name"
            } else {
                $new_path = if ($user_path) { "$($user_path.TrimEnd(';'));$install_dir" } else { $install_dir }
                $key.SetValue('Path', $new_path, [Microsoft.Win32.RegistryValueKind]::ExpandString)
                # Setting any user variable through .NET tells running programs (Explorer,
                # new terminals) the environment changed; the registry write alone does not.
                [Environment]::SetEnvironmentVariable('ZIDANE_INSTALL_NOTIFY', '1', 'User')
                [Environment]::SetEnvironmentVariable('ZIDANE_INSTALL_NOTIFY', $null, 'User')
                Say "added $install_dir to your user PATH; open a new terminal to use zidane by name"
            }
        } finally {
            $key.Close()
        }
        if (-not (Test-OnPath $env:Path $install_dir)) {
            $env:Path = "$env:Path;$install_dir"
        }
    } finally {
        Remove-Item -LiteralPath $work -Recurse -Force -ErrorAction SilentlyContinue
    }
}

try {
    Install-Zidane
} catch {
    [Console]::Error.WriteLine("zidane install: $($_.Exception.Message)")
    # Run as a file (`powershell -File install.ps1`), fail with a status; run by
    # `irm | iex`, stop here and leave the caller's shell open.
    if ($PSCommandPath) { exit 1 }
}
