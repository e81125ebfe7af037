import Foundation

/// Plays the tracks of one playlist in order.
final class PlaylistQueue: Player {
    private var tracks: [Track] = []
    private(set) var position = 0
    let crossfade: TimeInterval = 2.5

    init(tracks: [Track]) {
        self.tracks = tracks
        super.init()
    }

    /// The next playable track, skipping the explicit ones in safe mode.
    @discardableResult
    override func advance(safeMode: Bool = false) -> Track? {
        while position < tracks.count {
            let track = tracks[position]
            position += 1
            if safeMode && track.isExplicit {
                continue
            }
            print("playing \(track.title) at \(position)")
            return track
        }
        return nil
    }

    /* Total length of what is left, in minutes. */
    func remaining(rounding: Bool) -> Double {
        let left = tracks[position...].reduce(0.0) { $0 + $1.duration }
        guard left > 0 else { return 0 }
        let minutes = left / 60.0
        return rounding ? minutes.rounded() : minutes
    }
}
